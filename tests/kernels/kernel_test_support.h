// Shared pieces of the kernel tests: load a built variant (dlopen of <id>.abi3.so named by its
// metadata.json), call its ops through the dispatcher, make inputs in every layout the ops accept,
// and compare against a float64 reference with one tolerance per dtype.
#pragma once
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

namespace khub_test {

// The device the suite runs on: CUDA in the gpu build of the suite, CPU otherwise.
at::Device test_device();
bool on_cuda();

// Loads the variant dir once (metadata.json -> id -> <id>.abi3.so) and returns its id.
const std::string& load_variant(const std::string& variant_dir);

// True when the suite runs on the stable-ABI builds (KHUB_KERNELS_TEST_ABI=stable in the environment).
bool stable_abi();

// Loads this run's build of a kernel and returns its id: `torch_dir` (the torch<MM> build), or
// `stable_dir` under stable_abi() (an error when that build was not configured, nullptr).
const std::string& kernel_id(const char* torch_dir, const char* stable_dir);

// The op `<id>::<name>` with C++ signature Sig.
template <typename Sig>
c10::TypedOperatorHandle<Sig> op(const std::string& id, const char* name) {
  return c10::Dispatcher::singleton().findSchemaOrThrow((id + "::" + name).c_str(), "").typed<Sig>();
}

enum class Layout { Contiguous, RowStrided, Misaligned };
const char* layout_name(Layout l);

// Random normal values (never zeros) of `shape` in `dtype` on the test device, laid out as asked:
// RowStrided pads the last dimension (row stride > n); Misaligned starts one element past a
// 16-byte boundary.
at::Tensor make_input(at::IntArrayRef shape, at::ScalarType dtype, Layout layout = Layout::Contiguous,
                      double scale = 1.0, double mean = 0.0);

// Fills the caching allocator's next block of this size with NaN so an unwritten output shows.
void poison_next(at::IntArrayRef shape, at::ScalarType dtype);

// On CUDA, enqueues milliseconds of unrelated work (a 4096 x 4096 fp32 matmul) so the calls that
// follow queue up behind it and then run back to back, as in a graph, instead of each launch
// finding the GPU idle. No-op on CPU.
void queue_behind_busy_gpu();

struct Tolerance {
  double rtol, atol, rel_l2;
};
Tolerance tolerance(at::ScalarType dtype);

// Fails the test unless out (any dtype/device) matches ref (float64) within tolerance(dtype):
// no NaN, |out - ref| <= atol + rtol * |ref| everywhere, rel. L2 error <= rel_l2.
// Returns the max abs error.
double expect_close(const at::Tensor& out, const at::Tensor& ref, at::ScalarType dtype, const std::string& what);

// Rounds a float64 tensor to `dtype` and back (reproduces an intermediate rounding).
at::Tensor round_to(const at::Tensor& t, at::ScalarType dtype);

// Records the max error seen per op/dtype; printed at the end of the run (docs/kernels.md).
void record_error(const std::string& op, at::ScalarType dtype, double max_abs);

// Expects `f` (a dispatcher call) to throw the kernel's error with a message containing `needle`:
// c10::Error from a torch build (TORCH_CHECK), std::runtime_error from a stable-ABI build
// (STD_TORCH_CHECK; the dispatcher passes it through as is).
template <typename F>
void expect_torch_error(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "expected an error containing '" << needle << "'";
  } catch (const c10::Error& e) {
    EXPECT_FALSE(stable_abi()) << "a stable-ABI kernel threw c10::Error: " << e.what_without_backtrace();
    const std::string msg = e.what_without_backtrace();
    EXPECT_NE(msg.find(needle), std::string::npos) << "message: " << msg;
  } catch (const std::runtime_error& e) {
    EXPECT_TRUE(stable_abi()) << "a torch kernel threw std::runtime_error: " << e.what();
    const std::string msg = e.what();
    EXPECT_NE(msg.find(needle), std::string::npos) << "message: " << msg;
  }
}

// The CPU implementation splits rows across threads (glue::parallel_rows). Runs `call` (an op on CPU
// tensors large enough to split) with one intra-op thread, with two or more, and from every
// inter-op pool thread at once (the op's own parts then find the pool busy), and expects every
// result bit-identical to the one-thread result and no call to hang.
void expect_cpu_parallel_rows_match_serial(const std::function<std::vector<at::Tensor>()>& call,
                                           const std::string& what);

inline const at::ScalarType kDtypes[] = {at::kBFloat16, at::kHalf, at::kFloat};

}  // namespace khub_test
