#pragma once
// The op schemas of geglu: one list for both bindings (torch_binding.cpp, torch_binding_stable.cpp),
// so the two builds can never register different signatures.
namespace khub_kernels::geglu {

inline constexpr const char* kOpSchemas[] = {
    "geglu(Tensor x, bool approximate=False) -> Tensor",
    "gelu_tanh(Tensor x) -> Tensor",
};

}  // namespace khub_kernels::geglu
