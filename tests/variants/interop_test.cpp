// khub against the Python `kernels` package from KHUB_PYTHON: the same parse results and texts, the
// same accepted variants in the same order (ties aside) and the same choice, for resolve_test's tables and
// generated names and hosts. Skips when the interpreter or the package is missing; needs no network.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "khub/variants/resolve.h"
#include "random_names.h"
#include "run_process.h"
#include "test_hosts.h"
#include "test_names.h"

namespace khub::variants {
namespace {

using Json = nlohmann::json;

class KernelsOracle : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = scratch_dir("variants-interop");
    if (!std::filesystem::exists(KHUB_PYTHON)) GTEST_SKIP() << "no interpreter at " << KHUB_PYTHON;
    ProcessResult probe = run_command(quote(KHUB_PYTHON) + " -c 'import kernels.variants'", dir_);
    if (probe.exit_code != 0) GTEST_SKIP() << "the kernels package does not import: " << probe.err;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

 public:
  Json ask(const Json& request) {
    write_text(dir_ / "request.json", request.dump());
    ProcessResult r = run_command(quote(KHUB_PYTHON) + " " + quote(KHUB_ORACLE_SCRIPT) + " < " +
                                      quote((dir_ / "request.json").string()),
                                  dir_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? Json::parse(r.out) : Json::object();
  }

  std::filesystem::path dir_;
};

struct Case {
  HostInfo host;
  std::vector<std::string> names;
};

std::vector<std::string> set_r() {
  return {"torch210-cxx11-cu128-x86_64-linux", "torch210-cxx11-cu126-x86_64-linux",
          "torch210-cxx11-cu130-x86_64-linux", "torch210-cxx11-rocm70-x86_64-linux",
          "torch210-cxx11-cpu-x86_64-linux",   "torch210-cpu-aarch64-darwin",
          "torch210-metal-aarch64-darwin",     "torch-cuda",
          "torch-cpu",                         "torch-metal"};
}

std::vector<std::string> set_m() {
  return {"torch-stable-abi29-cu126-x86_64-linux", "torch-stable-abi211-cu128-x86_64-linux",
          "torch-stable-abi211-cu126-x86_64-linux", "torch212-cxx11-cu128-x86_64-linux",
          "torch212-cu130-x86_64-linux",            "torch212-cu126-x86_64-linux",
          "tvm-ffi01-cu128-x86_64-linux",           "tvm-ffi01-cu130-x86_64-linux",
          "torch-cuda",                             "torch-universal"};
}

std::vector<Case> spec_cases() {
  std::vector<Case> cases;
  for (Backend b : {cuda(12, 8), cuda(12, 9), cuda(12, 5), cuda(11, 8), cuda(13, 2), rocm(7, 0), rocm(7, 1), cpu()}) {
    cases.push_back({linux_host({2, 10}, b), set_r()});
  }
  cases.push_back({linux_host({2, 9}, cuda(12, 8)), set_r()});
  cases.push_back({linux_host({2, 10}, cuda(12, 8), "aarch64"), set_r()});
  cases.push_back({linux_host(std::nullopt, cuda(12, 8)), set_r()});
  for (auto macos : {std::optional<Version>{Version{26, 1}}, std::optional<Version>{Version{15, 7}}, std::optional<Version>{}}) {
    cases.push_back({darwin_host(metal(), macos), set_r()});
  }
  cases.push_back({darwin_host(cpu(), std::nullopt), set_r()});
  for (auto [torch, b, tvm] : {std::tuple{Version{2, 12}, cuda(13, 0), true}, std::tuple{Version{2, 12}, cuda(12, 8), true},
                               std::tuple{Version{2, 10}, cuda(12, 8), false}}) {
    HostInfo h = linux_host(torch, b);
    if (tvm) h.tvm_ffi = Version{0, 1};
    cases.push_back({h, set_m()});
  }
  const std::vector<std::string> xpu = {"torch212-cxx11-xpu20253-x86_64-linux", "torch213-cxx11-xpu20260-x86_64-linux",
                                        "torch-xpu"};
  cases.push_back({linux_host({2, 12}, backend(BackendKind::Xpu, 2025, 3)), xpu});
  cases.push_back({linux_host({2, 12}, backend(BackendKind::Xpu, 2026, 0)), xpu});
  cases.push_back({linux_host({2, 10}, backend(BackendKind::Cann, 8, 3), "aarch64"),
                   {"torch210-cxx11-cann83-aarch64-linux", "torch-npu", "torch-cpu", "torch-universal"}});
  HostInfo windows = linux_host({2, 10}, cuda(12, 8));
  windows.os = "windows";
  windows.cxx11_abi.reset();
  cases.push_back({windows, {"torch210-cu128-x86_64-windows", "torch210-cxx11-cu128-x86_64-windows",
                             "torch210-cpu-x86_64-windows"}});
  HostInfo old_abi = linux_host({2, 10}, cuda(12, 6));
  old_abi.cxx11_abi = false;
  cases.push_back({old_abi, {"torch210-cxx98-cu126-x86_64-linux", "torch210-cxx11-cu126-x86_64-linux",
                             "torch210-cu126-x86_64-linux"}});
  return cases;
}

Json trace_json(const Resolution& r) {
  Json out = Json::array();
  for (const Decision& d : r.decisions) {
    out.push_back({{"variant", d.variant.name()}, {"accepted", d.accepted},
                   {"reason", d.accepted ? Json(nullptr) : Json(d.reason)}});
  }
  return out;
}

// Fed in khub's order, Python's stable sort must give exactly khub's trace. Fed reversed, it may
// only differ inside groups of equal upstream keys.
void check_cases(KernelsOracle& oracle, const std::vector<Case>& cases) {
  Json request = {{"resolve", Json::array()}};
  std::vector<Resolution> ours;
  for (const Case& c : cases) {
    ours.push_back(resolve_variants(c.names, c.host));
    std::vector<std::string> in_khub_order;
    for (const Decision& d : ours.back().decisions) in_khub_order.push_back(d.name);
    const Json host = Json::parse(host_to_json(c.host));
    request["resolve"].push_back({{"host", host}, {"candidates", in_khub_order}});
    std::reverse(in_khub_order.begin(), in_khub_order.end());
    request["resolve"].push_back({{"host", host}, {"candidates", in_khub_order}});
  }
  const Json answer = oracle.ask(request);
  ASSERT_EQ(answer["resolve"].size(), 2 * cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    const Resolution& r = ours[i];
    const Json& same_order = answer["resolve"][2 * i];
    const std::string where = host_to_json(cases[i].host);
    EXPECT_EQ(same_order["trace"], trace_json(r)) << where;
    EXPECT_EQ(same_order["accepted"], Json(r.accepted())) << where;
    EXPECT_EQ(same_order["trace_text"], r.trace()) << where;

    const Json& reversed = answer["resolve"][2 * i + 1];
    ASSERT_EQ(reversed["trace"].size(), r.decisions.size()) << where;
    for (size_t k = 0; k < r.decisions.size(); ++k) {
      const Json& theirs = reversed["trace"][k];
      const Variant v = *parse_variant(theirs["variant"].get<std::string>());
      const Decision as_decision{v, v.name(), theirs["accepted"].get<bool>(), {}};
      EXPECT_EQ(sort_key(as_decision), sort_key(r.decisions[k])) << where << " position " << k;
    }
    // Same choice whenever the best key is not shared (upstream leaves ties to set order).
    const bool tied_top = r.decisions.size() > 1 && r.decisions[1].accepted &&
                          sort_key(r.decisions[0]) == sort_key(r.decisions[1]);
    if (!tied_top) {
      const Json chosen = r.chosen() ? Json(r.chosen()->name) : Json(nullptr);
      EXPECT_EQ(reversed["accepted"].empty() ? Json(nullptr) : reversed["accepted"][0], chosen) << where;
    }
  }
}

TEST_F(KernelsOracle, SpecTablesResolveTheSame) { check_cases(*this, spec_cases()); }

TEST_F(KernelsOracle, GeneratedHostsResolveTheSame) {
  std::mt19937 rng(1130);
  std::vector<Case> cases;
  for (int i = 0; i < 400; ++i) {
    HostInfo host = random_host(rng);
    cases.push_back({host, random_candidate_set(rng, host)});
  }
  check_cases(*this, cases);
}

TEST_F(KernelsOracle, ParseResultsAndErrorTextsMatch) {
  std::vector<std::string> names;
  for (const auto* list : {&variant_strings(), &stable_abi_variant_strings(), &noarch_variant_strings(),
                           &superset_variant_strings()}) {
    names.insert(names.end(), list->begin(), list->end());
  }
  for (const char* n : {"torch210-cxx11-cu128-x86_64", "torch210-cxx11-cu128-x86_64-linux-extra",
                        "torch210-cxx03-cpu-x86_64-linux", "torch210-cxx11-foo-x86_64-linux", "torch2-cpu-x86_64-linux",
                        "Torch210-cpu-x86_64-linux", "cuda-x86_64-linux", "tvm-ffi-cpu-x86_64-linux",
                        "torch-stable-abi2-cpu-x86_64-linux", "torch-stable-abi-cu128-x86_64-linux", "torch-",
                        "torch-cuda-extra", "torch", "", "-", "tvm", "tvm-ffi", "tvm-ffi01", "torch2-cxx98",
                        "torch210-cu12-x86_64-linux", "torch210-rocm710-x86_64-linux", "torch210-cu-x86_64-linux",
                        "torch210-it's-x86_64-linux", "torch210-say\"hi\"-x86_64-linux", "torch210-'\"-x86_64-linux",
                        "torch210-a\\b-x86_64-linux", "torch210-a\tb\nc\x01-x86_64-linux", "torch210-caf\xc3\xa9-x-y",
                        "torch210-a\xc2\xa0" "b-x-y", "torch210-\xe2\x80\x8b-x-y", "torch210-\xe6\x97\xa5\xe6\x9c\xac-x-y"}) {
    names.push_back(n);
  }
  std::mt19937 rng(99);
  for (int i = 0; i < 3000; ++i) names.push_back(mangle(random_variant_name(rng), rng));

  const Json answer = ask({{"parse", names}});
  ASSERT_EQ(answer["parse"].size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    const Json& theirs = answer["parse"][i];
    Expected<Variant> ours = parse_variant(names[i]);
    ASSERT_EQ(ours.has_value(), theirs["ok"].get<bool>()) << names[i];
    if (ours) {
      EXPECT_EQ(ours->name(), theirs["variant_str"]) << names[i];
    } else {
      EXPECT_EQ(ours.error().message, theirs["error"]) << names[i];
    }
  }
}

TEST_F(KernelsOracle, BackendOverrideMatches) {
  Json request = {{"select_backend", Json::array()}};
  std::vector<std::pair<HostInfo, std::string>> cases;
  for (Backend b : {cpu(), cuda(12, 8), rocm(7, 0), metal(), backend(BackendKind::Xpu, 2025, 3),
                    backend(BackendKind::Cann, 8, 3), Backend{BackendKind::Neuron, {}}, Backend{BackendKind::Tpu, {}}}) {
    for (const char* name : {"cpu", "cuda", "rocm", "xpu", "metal", "cann", "npu", "neuron", "tpu", "", "CUDA"}) {
      cases.emplace_back(linux_host({2, 12}, b), name);
      request["select_backend"].push_back({{"host", Json::parse(host_to_json(cases.back().first))}, {"backend", name}});
    }
  }
  const Json answer = ask(request);
  ASSERT_EQ(answer["select_backend"].size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    const Json& theirs = answer["select_backend"][i];
    Expected<HostInfo> ours = with_backend(cases[i].first, cases[i].second);
    const std::string where = std::string(cases[i].first.backend.name()) + " / " + cases[i].second;
    ASSERT_EQ(ours.has_value(), theirs["ok"].get<bool>()) << where;
    if (ours) {
      EXPECT_EQ(ours->backend.token(), theirs["token"]) << where;
    } else {
      EXPECT_EQ(ours.error().message, theirs["error"]) << where;
    }
  }
}

TEST_F(KernelsOracle, TorchFreeCudaDetectionMatches) {
  const Json answer = ask({{"cuda_runtime", true}});
  const std::optional<Version> ours = detect_host_without_torch().backend.version;
  EXPECT_EQ(answer["cuda_runtime"], ours ? Json(ours->str()) : Json(nullptr));
}

}  // namespace
}  // namespace khub::variants
