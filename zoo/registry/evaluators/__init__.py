"""Evaluators: a model's outputs on labelled samples to one number (``zoo.Metric``'s ``fn``).

Each one is small and typed, carries its unit and checks each label before a
build starts; numpy is imported inside the functions. Plugins reach them through
``zoo`` (``from zoo import top1``), which loads each from its own module:

- ``classification``: ``top1`` (classifiers, keyword spotting);
- ``ranking``: ``roc_auc``, ``f1_at``, ``reconstruction_roc_auc`` (voice activity, anomalies);
- ``text``: ``char_error_rate``, ``word_error_rate``, ``ctc_greedy``, ``edit_distance`` (speech);
- ``segmentation``: ``miou``; ``detection``: ``recall_at``, ``precision_at``, ``map_at``;
- ``pitch``: ``raw_pitch_accuracy``, ``decode_pitch`` (pitch estimation).

Nothing is imported here, so naming one evaluator at registration loads only its module.
"""
