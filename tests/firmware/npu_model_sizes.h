/* The C model's buffer sizes for the host-gcc harnesses (npu_model_host.c, npu_standin_host.c): fixed, as
   large as the hand-built and mutated programs of tests/firmware/test_npu_model_host.py need. A firmware
   project's own npu_model_sizes.h is written by zoo from its program (zoo/registry/firmware/npu_sizes.py). */
#ifndef NPU_MODEL_SIZES_H_
#define NPU_MODEL_SIZES_H_
#define NPU_MODEL_WEIGHT_VALUES 262144
#define NPU_MODEL_IFM_VALUES 262144
#define NPU_MODEL_OFM_VALUES 262144
#define NPU_MODEL_CHANNELS 2048
#endif
