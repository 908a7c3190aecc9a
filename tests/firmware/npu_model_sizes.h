/* The C model's buffer sizes for the host-gcc harnesses (npu_model_host.c, npu_standin_host.c): fixed, as
   large as the hand-built and mutated programs of tests/firmware/test_npu_model_host.py and
   test_npu_model_u85.py need (the U85's: mv2 on u85-256 and the tiny networks the suite builds). A firmware
   project's own npu_model_sizes.h is written by zoo from its program (zoo/registry/firmware/npu_sizes.py). */
#ifndef NPU_MODEL_SIZES_H_
#define NPU_MODEL_SIZES_H_
#define NPU_MODEL_WEIGHT_VALUES 262144
#define NPU_MODEL_IFM_VALUES 262144
#define NPU_MODEL_OFM_VALUES 262144
#define NPU_MODEL_CHANNELS 2048
#define NPU_MODEL_U85_WEIGHT_VALUES (1L << 21)
#define NPU_MODEL_U85_MAP_VALUES (1L << 21)
#define NPU_MODEL_U85_CHAIN_VALUES (1L << 17)
#define NPU_MODEL_U85_CHANNELS 4096
#endif
