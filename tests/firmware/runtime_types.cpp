// The size and alignment of each runtime type zoo's method-allocator replay counts
// (zoo/registry/firmware/method_allocator.py), under ExecuTorch's headers, for the compiler at hand.
// Compiled to assembly only: the test reads zoo_runtime_types from the .s file.
#include <optional>

#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/freeable_buffer.h>
#include <executorch/runtime/kernel/operator_registry.h>

using namespace executorch::runtime;
using executorch::aten::Tensor;
using executorch::aten::TensorImpl;

#define LAYOUT(T) sizeof(T), alignof(T)

// In the order of ZOO_RUNTIME_TYPES in the test.
extern "C" const unsigned zoo_runtime_types[] = {
    LAYOUT(void*),
    LAYOUT(EValue),
    LAYOUT(TensorImpl),
    LAYOUT(Tensor),
    LAYOUT(FreeableBuffer),
    LAYOUT(CompileSpec),
    LAYOUT(TensorMeta),
    LAYOUT(BoxedEvalueList<int64_t>),
    LAYOUT(BoxedEvalueList<Tensor>),
    LAYOUT(BoxedEvalueList<std::optional<Tensor>>),
    LAYOUT(std::optional<Tensor>),
    LAYOUT(ArrayRef<double>),
    LAYOUT(Span<EValue*>),
    LAYOUT(OpFunction),
    LAYOUT(int64_t),
};
