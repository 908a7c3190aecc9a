"""What zoo keeps on disk: the content-addressed cache, the manifest and its schema, failure
records, evaluations and measured metrics. Torch-free.
"""
