// tests/examples/bad_checkpoints.cpp — spoils a good tiny_lm checkpoint in the ways a user's
// file can be spoiled, one variant per directory, for the refusal tests of the examples:
//
//   bad_checkpoints GOOD.safetensors OUT_DIR
//
// writes OUT_DIR/<variant>/checkpoint.safetensors for each variant below (a directory each,
// so that `tiny_lm train --resume --out OUT_DIR/<variant>` finds it too).
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/core.h"

namespace {

using Contents = tg::safetensors::Contents;

std::string with_config(const std::string& config, const nlohmann::json& changes) {
  nlohmann::json j = nlohmann::json::parse(config);
  j.update(changes);
  return j.dump();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: bad_checkpoints GOOD.safetensors OUT_DIR\n");
    return 2;
  }
  const std::string good = argv[1], out = argv[2];
  const Contents c = tg::safetensors::load(good);

  const std::map<std::string, std::function<void(Contents&)>> variants = {
      {"no_config", [](Contents& v) { v.metadata.erase("config"); }},
      {"no_tokenizer", [](Contents& v) { v.metadata.erase("tokenizer"); }},
      {"no_step", [](Contents& v) { v.metadata.erase("tapegrad.step"); }},
      {"step_not_a_number", [](Contents& v) { v.metadata["tapegrad.step"] = "twelve"; }},
      {"lr_not_a_number", [](Contents& v) { v.metadata["tapegrad.optimizer.lr"] = "fast"; }},
      {"config_not_json", [](Contents& v) { v.metadata["config"] = "{n_layers: 2"; }},
      {"config_layers_1e8",
       [](Contents& v) {
         v.metadata["config"] = with_config(v.metadata["config"], {{"n_layers", 100'000'000}});
       }},
      {"config_too_many_parameters",
       [](Contents& v) {
         v.metadata["config"] =
             with_config(v.metadata["config"], {{"d_model", 4096}, {"n_layers", 1000}});
       }},
      {"config_layer_count_is_text",
       [](Contents& v) {
         v.metadata["config"] = with_config(v.metadata["config"], {{"n_layers", "two"}});
       }},
      {"vocab_mismatch",
       [](Contents& v) {
         nlohmann::json t = nlohmann::json::parse(v.metadata["tokenizer"]);
         std::string vocab = t["vocab"];
         t["vocab"] = vocab.substr(0, vocab.size() - 1);
         v.metadata["tokenizer"] = t.dump();
       }},
      {"missing_tensor", [](Contents& v) { v.tensors.erase(v.tensors.begin()); }},
      {"wrong_shape",
       [](Contents& v) {
         auto& [name, t] = *v.tensors.begin();
         t = tg::zeros({t.numel() + 1}, t.dtype());
       }},
  };
  for (const auto& [name, spoil] : variants) {
    Contents v = c;
    spoil(v);
    std::filesystem::create_directories(out + "/" + name);
    tg::safetensors::save(out + "/" + name + "/checkpoint.safetensors", v.tensors, v.metadata);
  }
  // Cut in the middle of the tensor data, and inside the header. The refusals print sizes,
  // so the cut file must not depend on where the build lives: it is cut from a copy whose
  // one path (metadata "data", the text the run read) is cut down to its file name. (With
  // the whole path, a header padded to 8 bytes grows with the build directory's name, and
  // docs/errors.md with it.)
  Contents portable = c;
  portable.metadata["data"] = std::filesystem::path(c.metadata.at("data")).filename().string();
  const std::string copy = out + "/portable.safetensors";
  tg::safetensors::save(copy, portable.tensors, portable.metadata);
  std::stringstream bytes;
  bytes << std::ifstream(copy, std::ios::binary).rdbuf();
  std::filesystem::remove(copy);
  for (const auto& [name, keep] : {std::pair{"truncated", bytes.str().size() / 2},
                                   std::pair{"truncated_header", size_t{20}}}) {
    std::filesystem::create_directories(out + "/" + name);
    std::ofstream(out + "/" + name + "/checkpoint.safetensors", std::ios::binary)
        << bytes.str().substr(0, keep);
  }
  return 0;
}
