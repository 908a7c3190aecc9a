// Loads a .pte's "forward" with ExecuTorch's own runtime (the wheel's libexecutorch.so) and
// prints what load_method took: the method allocator's use, and the temp allocator's peak.
// The Ethos-U backend cannot run on the host; the one registered here allocates at init what
// ExecuTorch's EthosUBackend::init does: an ExecutionHandle of two pointers, on the heap, and
// nothing from the runtime allocator (backends/arm/runtime/EthosUBackend.cpp).
#include <cstdio>
#include <cstdlib>
#include <new>
#include <vector>

#include <executorch/extension/data_loader/buffer_data_loader.h>
#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/core/hierarchical_allocator.h>
#include <executorch/runtime/core/memory_allocator.h>
#include <executorch/runtime/executor/memory_manager.h>
#include <executorch/runtime/executor/method.h>
#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/platform/runtime.h>

using namespace executorch::runtime;

namespace {

class PeakAllocator final : public MemoryAllocator {
 public:
  PeakAllocator(uint32_t size, uint8_t* base) : MemoryAllocator(size, base) {}
  void* allocate(size_t size, size_t alignment) override {
    void* out = MemoryAllocator::allocate(size, alignment);
    if (used_size() > peak) peak = used_size();
    return out;
  }
  size_t peak = 0;
};

struct ExecutionHandle {
  FreeableBuffer* processed;
  void* platform_state;
};

class InitOnlyEthosU final : public BackendInterface {
 public:
  bool is_available() const override { return true; }
  Result<DelegateHandle*> init(BackendInitContext&, FreeableBuffer* processed,
                               ArrayRef<CompileSpec>) const override {
    auto* handle = new (std::nothrow) ExecutionHandle();
    if (handle == nullptr) return Error::MemoryAllocationFailed;
    handle->processed = processed;
    return handle;
  }
  Error execute(BackendExecutionContext&, DelegateHandle*, Span<EValue*>) const override {
    return Error::NotSupported;
  }
};

InitOnlyEthosU ethos_u;
alignas(16) uint8_t method_pool[8 << 20];
alignas(16) uint8_t temp_pool[1 << 20];

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    std::fprintf(stderr, "usage: %s PROGRAM.pte\n", argv[0]);
    return 2;
  }
  runtime_init();
  if (register_backend({"EthosUBackend", &ethos_u}) != Error::Ok) return 3;
  std::FILE* file = std::fopen(argv[1], "rb");
  if (file == nullptr) return 4;
  std::vector<uint8_t> bytes;
  for (int c; (c = std::fgetc(file)) != EOF;) bytes.push_back(static_cast<uint8_t>(c));
  std::fclose(file);

  executorch::extension::BufferDataLoader loader(bytes.data(), bytes.size());
  auto program = Program::load(&loader);
  if (!program.ok()) {
    std::fprintf(stderr, "Program::load failed: 0x%x\n", static_cast<unsigned>(program.error()));
    return 5;
  }
  auto meta = program->method_meta("forward");
  if (!meta.ok()) return 6;
  std::vector<std::vector<uint8_t>> buffers;
  std::vector<Span<uint8_t>> spans;
  for (size_t i = 0; i < meta->num_memory_planned_buffers(); i++) {
    buffers.emplace_back(static_cast<size_t>(meta->memory_planned_buffer_size(i).get()));
  }
  for (auto& b : buffers) spans.emplace_back(b.data(), b.size());
  HierarchicalAllocator planned({spans.data(), spans.size()});
  PeakAllocator method_allocator(sizeof(method_pool), method_pool);
  // argv[2]: the temp pool's size (default: all of it), to find the runtime's floor.
  uint32_t temp_size = argc > 2 ? static_cast<uint32_t>(std::strtoul(argv[2], nullptr, 10)) : sizeof(temp_pool);
  PeakAllocator temp_allocator(temp_size, temp_pool);
  MemoryManager memory(&method_allocator, &planned, &temp_allocator);
  auto method = program->load_method("forward", &memory);
  if (!method.ok()) {
    std::fprintf(stderr, "load_method failed: 0x%x\n", static_cast<unsigned>(method.error()));
    return 7;
  }
  std::printf("{\"method_bytes\": %zu, \"load_temp_bytes\": %zu}\n", method_allocator.used_size(),
              temp_allocator.peak);
  return 0;
}
