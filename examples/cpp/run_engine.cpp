// Runs an extract-trt encoder engine (engine-<gpu>-<precision>.plan) on one packed chunk and prints the
// label of every block. Token ids come from the caller's tokenizer (tokenizer.json of the model directory;
// chunk layout: [bos] block tokens <|sep|> ... [eos], see docs/cpp.md). Call sequence: deserialize ->
// set input shapes -> bind addresses (an output allocator for the data-dependent block outputs) -> enqueue.
//
//   run_engine MODEL_DIR/engine-l4-fp16.plan id id id ...
#include <NvInfer.h>
#include <NvInferPlugin.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#define CHECK(call) do { cudaError_t e = (call); if (e != cudaSuccess) { std::fprintf(stderr, "%s\n", cudaGetErrorString(e)); std::exit(1); } } while (0)

class Logger : public nvinfer1::ILogger {
  void log(Severity severity, const char* msg) noexcept override {
    if (severity <= Severity::kWARNING) std::cerr << msg << "\n";
  }
};

// Receives outputs whose size is known only after execution (block_label, block_logits, ...).
class GrowingAllocator : public nvinfer1::IOutputAllocator {
 public:
  void* reallocateOutputAsync(char const*, void*, uint64_t size, uint64_t, cudaStream_t) noexcept override {
    if (size > capacity_) {
      if (ptr_) cudaFree(ptr_);
      capacity_ = size > 0 ? size : 1;
      if (cudaMalloc(&ptr_, capacity_) != cudaSuccess) return nullptr;
    }
    return ptr_;
  }
  void notifyShape(char const*, nvinfer1::Dims const& dims) noexcept override { dims_ = dims; }
  int64_t count() const { int64_t n = 1; for (int i = 0; i < dims_.nbDims; ++i) n *= dims_.d[i]; return n; }
  void* data() const { return ptr_; }
  ~GrowingAllocator() override { if (ptr_) cudaFree(ptr_); }

 private:
  void* ptr_ = nullptr;
  uint64_t capacity_ = 0;
  nvinfer1::Dims dims_{};
};

int main(int argc, char** argv) {
  if (argc < 3) { std::cerr << "usage: run_engine ENGINE.plan TOKEN_ID...\n"; return 2; }
  std::ifstream file(argv[1], std::ios::binary);
  std::vector<char> plan((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  std::vector<int64_t> ids;
  for (int i = 2; i < argc; ++i) ids.push_back(std::atoll(argv[i]));
  std::vector<int64_t> mask(ids.size(), 1);

  Logger logger;
  initLibNvInferPlugins(&logger, "");  // engines whose manifest record says "plugins": true need it
  std::unique_ptr<nvinfer1::IRuntime> runtime{nvinfer1::createInferRuntime(logger)};
  std::unique_ptr<nvinfer1::ICudaEngine> engine{runtime->deserializeCudaEngine(plan.data(), plan.size())};
  if (!engine) { std::cerr << "cannot deserialize (other GPU or TensorRT version? see the manifest record)\n"; return 1; }
  std::unique_ptr<nvinfer1::IExecutionContext> context{engine->createExecutionContext()};

  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  const nvinfer1::Dims2 shape{1, static_cast<int64_t>(ids.size())};  // [batch, sequence] within the profile
  void *d_ids, *d_mask;
  CHECK(cudaMalloc(&d_ids, ids.size() * sizeof(int64_t)));
  CHECK(cudaMalloc(&d_mask, mask.size() * sizeof(int64_t)));
  CHECK(cudaMemcpyAsync(d_ids, ids.data(), ids.size() * sizeof(int64_t), cudaMemcpyHostToDevice, stream));
  CHECK(cudaMemcpyAsync(d_mask, mask.data(), mask.size() * sizeof(int64_t), cudaMemcpyHostToDevice, stream));
  context->setInputShape("input_ids", shape);
  context->setTensorAddress("input_ids", d_ids);
  context->setInputShape("attention_mask", shape);
  context->setTensorAddress("attention_mask", d_mask);

  // Every output of the "blocks" layout is data-dependent (one row per <|sep|>): bind allocators.
  std::vector<std::unique_ptr<GrowingAllocator>> allocators;
  GrowingAllocator* labels = nullptr;
  for (int i = 0; i < engine->getNbIOTensors(); ++i) {
    const char* name = engine->getIOTensorName(i);
    if (engine->getTensorIOMode(name) != nvinfer1::TensorIOMode::kOUTPUT) continue;
    allocators.emplace_back(new GrowingAllocator);
    context->setOutputAllocator(name, allocators.back().get());
    if (std::string(name) == "block_label") labels = allocators.back().get();
  }
  if (!context->enqueueV3(stream)) { std::cerr << "enqueueV3 failed\n"; return 1; }
  CHECK(cudaStreamSynchronize(stream));
  if (!labels) { std::cerr << "engine has no block_label output (logits layout?)\n"; return 1; }
  std::vector<int64_t> host(labels->count());
  CHECK(cudaMemcpy(host.data(), labels->data(), host.size() * sizeof(int64_t), cudaMemcpyDeviceToHost));
  for (size_t b = 0; b < host.size(); ++b) std::cout << "block " << b << " label " << host[b] << "\n";
  cudaFree(d_ids);
  cudaFree(d_mask);
  cudaStreamDestroy(stream);
  return 0;
}
