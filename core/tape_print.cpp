// core/tape_print.cpp — print_tape and to_dot: walking the graph without running it.
//
// Both start like tg::backward does (core/autograd.cpp, Engine::run): collect the nodes
// reachable from the root through next_edges, then sort them by sequence number. Here the
// sort is ascending (oldest first, the order the forward ran), and nodes are named by
// their position in that list (#0, #1, ...) rather than by the global sequence number,
// which depends on how many ops the whole program recorded before.
#include "core/tape_print.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/autograd.h"

namespace tg {
namespace {

// The nodes `root` depends on, oldest first (empty for a leaf).
std::vector<const Node*> nodes_in_tape_order(const Tensor& root, const char* op) {
  TG_CHECK(root.defined(), MisuseError,
           "{}: the tensor is undefined (default-constructed); pass the output of a "
           "computation",
           op);
  std::vector<const Node*> nodes;
  if (!root.grad_fn()) return nodes;
  std::unordered_set<const Node*> seen{root.grad_fn().get()};
  std::vector<const Node*> stack{root.grad_fn().get()};
  while (!stack.empty()) {  // no recursion: a graph can be 100,000 ops deep
    const Node* n = stack.back();
    stack.pop_back();
    nodes.push_back(n);
    for (const Edge& e : n->next_edges) {
      if (e.fn && seen.insert(e.fn.get()).second) stack.push_back(e.fn.get());
    }
  }
  std::sort(nodes.begin(), nodes.end(),
            [](const Node* a, const Node* b) { return a->sequence_nr() < b->sequence_nr(); });
  return nodes;
}

std::unordered_map<const Node*, size_t> positions(const std::vector<const Node*>& nodes) {
  std::unordered_map<const Node*, size_t> pos;
  for (size_t i = 0; i < nodes.size(); ++i) pos[nodes[i]] = i;
  return pos;
}

// "(2, 3), (3)": the shapes of a node's outputs.
std::string output_shapes(const Node& n) {
  std::string s;
  for (const TensorMeta& m : n.outputs) s += fmt::format("{}{}", s.empty() ? "" : ", ", m.shape);
  return s;
}

// Where input `i` of `n` came from: "#k" (output 0 of node k), "#k.j" (output j of a node
// with several), "leaf" (a tensor that requires grad), or "const" (no gradient flows).
std::string source_of(const Node& n, size_t i, const std::unordered_map<const Node*, size_t>& pos) {
  const Edge& e = n.next_edges[i];
  if (e.fn) {
    const size_t k = pos.at(e.fn.get());
    if (e.fn->outputs.size() == 1) return fmt::format("#{}", k);
    return fmt::format("#{}.{}", k, e.output_nr);
  }
  return e.leaf ? "leaf" : "const";
}

// "autograd_tape.cpp:12": the file name without its directories (they depend on where the
// project was built), or "" when the op was applied without a location.
std::string location(const Here& where) {
  if (where.line() == 0) return "";
  const std::string_view file = where.file_name();
  const size_t slash = file.find_last_of('/');
  return fmt::format("{}:{}", slash == std::string_view::npos ? file : file.substr(slash + 1),
                     where.line());
}

// Escapes text for a double-quoted DOT string.
std::string dot_escape(std::string_view s) {
  std::string out;
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

struct Summary {
  double min = std::numeric_limits<double>::infinity();
  double mean = 0;
  double max = -std::numeric_limits<double>::infinity();
  double norm = 0;
};

// min, mean and max of t's values, and its L2 norm, accumulated in double.
Summary summarize(const Tensor& t) {
  const Tensor v = t.to(kFloat64);  // a contiguous copy, whatever t's dtype and layout
  const double* p = v.data<double>();
  Summary s;
  double sum = 0, squares = 0;
  for (int64_t i = 0; i < v.numel(); ++i) {
    s.min = std::min(s.min, p[i]);
    s.max = std::max(s.max, p[i]);
    sum += p[i];
    squares += p[i] * p[i];
  }
  s.mean = sum / static_cast<double>(v.numel());
  s.norm = std::sqrt(squares);
  return s;
}

// A leaf's DOT label (already escaped): its shape and dtype, and after a backward has
// filled its .grad, a summary of its values and the size of that gradient.
std::string leaf_label(const std::shared_ptr<TensorImpl>& impl) {
  const Tensor value(impl);
  std::string label = dot_escape(fmt::format("leaf {} {}", value.shape(), value.dtype()));
  if (!impl->grad || value.numel() == 0) return label;
  const Summary v = summarize(value), g = summarize(Tensor(impl->grad));
  return label + fmt::format("\\nmin {:.4g} mean {:.4g} max {:.4g}\\ngrad norm {:.4g}", v.min,
                             v.mean, v.max, g.norm);
}

}  // namespace

std::vector<TapeEntry> tape_entries(const Tensor& root) {
  std::vector<TapeEntry> entries;
  for (const Node* n : nodes_in_tape_order(root, "tape_entries")) {
    TapeEntry e;
    e.op = std::string(n->name());
    e.inputs.assign(n->inputs.begin(), n->inputs.end());
    e.outputs.assign(n->outputs.begin(), n->outputs.end());
    e.saved_bytes = n->released() ? 0 : n->saved_bytes();
    entries.push_back(std::move(e));
  }
  return entries;
}

std::string print_tape(const Tensor& root) {
  const std::vector<const Node*> nodes = nodes_in_tape_order(root, "print_tape");
  if (nodes.empty()) {
    return fmt::format(
        "0 ops on the tape: this tensor (shape {}) is a leaf, not the output of a recorded "
        "op\ntotal saved for backward: 0 bytes\n",
        root.shape());
  }
  const auto pos = positions(nodes);

  // One row of columns per node, then pad each column to its widest entry.
  struct Row {
    std::string index, name, inputs, outputs, saved, where;
  };
  std::vector<Row> rows;
  size_t total = 0, widest_bytes = 0;
  for (const Node* n : nodes) widest_bytes = std::max(widest_bytes, n->saved_bytes());
  const size_t bytes_width = fmt::format("{}", widest_bytes).size();
  for (size_t k = 0; k < nodes.size(); ++k) {
    const Node& n = *nodes[k];
    Row r;
    r.index = fmt::format("#{}", k);
    r.name = std::string(n.name());
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      r.inputs += fmt::format("{}{} {}", i ? ", " : "", source_of(n, i, pos), n.inputs[i].shape);
    }
    r.outputs = output_shapes(n);
    if (!n.outputs.empty()) r.outputs += fmt::format(" {}", n.outputs[0].dtype);
    r.saved = n.released() ? "freed by backward"
                           : fmt::format("saves {:>{}} bytes", n.saved_bytes(), bytes_width);
    r.where = location(n.where());
    total += n.saved_bytes();
    rows.push_back(std::move(r));
  }
  size_t w_index = 0, w_name = 0, w_inputs = 0, w_outputs = 0, w_saved = 0;
  for (const Row& r : rows) {
    w_index = std::max(w_index, r.index.size());
    w_name = std::max(w_name, r.name.size());
    w_inputs = std::max(w_inputs, r.inputs.size());
    w_outputs = std::max(w_outputs, r.outputs.size());
    w_saved = std::max(w_saved, r.saved.size());
  }

  std::string out = fmt::format(
      "{} op{} on the tape, oldest first (backward runs them from the "
      "bottom up):\n",
      nodes.size(), nodes.size() == 1 ? "" : "s");
  for (const Row& r : rows) {
    std::string line =
        fmt::format("  {:<{}}  {:<{}}  {:<{}}  -> {:<{}}  {:<{}}", r.index, w_index, r.name, w_name,
                    r.inputs, w_inputs, r.outputs, w_outputs, r.saved, w_saved);
    if (!r.where.empty()) line += fmt::format("  at {}", r.where);
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
  }
  out += fmt::format("total saved for backward: {} bytes\n", total);
  return out;
}

std::string to_dot(const Tensor& root) {
  const std::vector<const Node*> nodes = nodes_in_tape_order(root, "to_dot");
  const auto pos = positions(nodes);

  std::string out =
      "digraph tape {\n"
      "  node [fontname=\"Helvetica\", fontsize=10];\n";
  // Leaves, numbered in the order the ops (oldest first) use them.
  std::unordered_map<const TensorImpl*, size_t> leaves;
  auto add_leaf = [&](const std::shared_ptr<TensorImpl>& impl) {
    const auto [it, inserted] = leaves.try_emplace(impl.get(), leaves.size());
    if (inserted) {
      out += fmt::format(
          "  leaf{} [shape=ellipse, style=filled, fillcolor=lightblue, label=\"{}\"];\n",
          it->second, leaf_label(impl));
    }
    return it->second;
  };
  if (nodes.empty()) {  // the root itself is a leaf: the whole graph is one ellipse
    add_leaf(root.shared_impl());
    return out + "}\n";
  }
  std::string edges;
  for (size_t k = 0; k < nodes.size(); ++k) {
    const Node& n = *nodes[k];
    for (size_t i = 0; i < n.next_edges.size(); ++i) {
      const Edge& e = n.next_edges[i];
      if (e.fn) edges += fmt::format("  op{} -> op{};\n", pos.at(e.fn.get()), k);
      else if (e.leaf) edges += fmt::format("  leaf{} -> op{};\n", add_leaf(e.leaf), k);
    }
  }
  for (size_t k = 0; k < nodes.size(); ++k) {
    const Node& n = *nodes[k];
    const bool is_root = nodes[k] == root.grad_fn().get();
    out += fmt::format("  op{} [shape=box, style=filled, fillcolor={}, label=\"#{} {}\\n{}\"];\n",
                       k, is_root ? "darkolivegreen1" : "lightgray", k, dot_escape(n.name()),
                       output_shapes(n));
  }
  return out + edges + "}\n";
}

}  // namespace tg
