// tools/course_figures.cpp — writes every figure source of the course into one directory.
//
//   build/bin/course_figures DIR
//
// DIR gets the Graphviz sources (NN-name-graph.dot, made by tg::to_dot) and the SVG figures
// drawn by tools/course_figures_*.cpp (NN-name.svg); tools/course_figures.h says what makes
// them reproducible. scripts/figures.sh runs this, renders each .dot with Graphviz and
// copies the result to docs/images/course/; `scripts/figures.sh --check` (run by
// scripts/test.sh) compares a fresh run with the committed files. Not a CTest test: in a
// student tree the figures run the learner's blank exercises.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <string_view>

#include "core/error.h"
#include "tools/course_figures.h"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  std::string dir;
  CLI::App app{"course_figures: the figure sources of docs/course/ (see scripts/figures.sh)"};
  app.add_option("dir", dir, "directory to write the .dot and .svg sources into")->required();
  CLI11_PARSE(app, argc, argv);
  try {
    // Compute everything before writing anything: a failure leaves no half-written set.
    std::vector<tg::figures::Figure> all;
    for (auto part :
         {tg::figures::tensor_figures, tg::figures::op_figures, tg::figures::training_figures,
          tg::figures::cost_figures, tg::figures::attention_figures, tg::figures::text_figures,
          tg::figures::distributed_figures}) {
      for (tg::figures::Figure& f : part()) all.push_back(std::move(f));
    }
    std::set<std::string> names;
    for (const tg::figures::Figure& f : all) {
      TG_CHECK(names.insert(f.name).second, ValueError, "course_figures: two figures named {}",
               f.name);
    }

    std::error_code error;
    fs::create_directories(dir, error);
    TG_CHECK(!error && fs::is_directory(dir), ValueError,
             "course_figures: cannot create the output directory '{}'{}", dir,
             error ? ": " + error.message() : "");
    for (const tg::figures::Figure& f : all) {
      const fs::path path = fs::path(dir) / f.name;
      std::ofstream out(path, std::ios::binary);
      out << f.text;
      out.close();
      TG_CHECK(out.good(), ValueError, "course_figures: cannot write '{}'", path.string());
    }
    fmt::print("course_figures: wrote {} figure sources to {}\n", all.size(), dir);
  } catch (const tg::Error& e) {
    // Our own messages name the tool; one from the library (in a student tree: an exercise
    // not written yet) gets the name in front.
    const std::string_view message = e.what();
    fmt::print(stderr, "{}{}\n",
               message.starts_with("course_figures:") ? "" : "course_figures: ", message);
    return 1;
  }
  return 0;
}
