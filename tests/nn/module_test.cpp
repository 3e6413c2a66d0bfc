// tests/nn/module_test.cpp — Module: registration, names, state dicts, modes, printing.
#include <sstream>

#include "nn/nn.h"
#include "test_util.h"

namespace tg::nn {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using tg::testing::as_doubles;

// A block with an own parameter registered AFTER a child: PyTorch still lists a module's own
// parameters before its children's (named_parameters walks module by module).
class Block : public Module {
 public:
  explicit Block(Generator& gen) : Module("Block"), attn(3, 2, {}, gen) {
    register_module("attn", attn);
    register_parameter("scale", scale, ones({2}));
  }
  Linear attn;
  Tensor scale;
};

class Net : public UnaryModule {
 public:
  explicit Net(uint64_t seed = 0)
      : UnaryModule("Net"), gen(seed), head(2, 1, {.bias = false}, gen) {
    register_parameter("alpha", alpha, zeros({1}));
    register_module("blocks", blocks);
    blocks.push_back(std::make_unique<Block>(gen));
    blocks.push_back(std::make_unique<Block>(gen));
    register_module("head", head);
  }
  Tensor forward(const Tensor& x) override {
    Tensor h = zeros({x.size(0), 2});
    for (const auto& b : blocks) h = h + b->attn(x) * b->scale;  // blocks side by side
    return head(h) + alpha;
  }
  Generator gen;
  Tensor alpha;
  ModuleList<Block> blocks;
  Linear head;
};

// A plain chain of named members.
class Chain : public UnaryModule {
 public:
  Chain() : UnaryModule("Chain"), gen(1), fc1(3, 3, {}, gen), fc2(3, 1, {}, gen) {
    register_module("fc1", fc1);
    register_module("act", act);
    register_module("fc2", fc2);
  }
  Tensor forward(const Tensor& x) override { return fc2(act(fc1(x))); }
  Generator gen;
  Linear fc1;
  ReLU act;
  Linear fc2;
};

std::vector<std::string> names_of(const std::vector<std::pair<std::string, Tensor>>& items) {
  std::vector<std::string> out;
  for (const auto& item : items) out.push_back(item.first);
  return out;
}

TEST(ModuleTest, NamedParametersUseDottedPyTorchNamesInOrder) {
  Net net;
  EXPECT_THAT(
      names_of(net.named_parameters()),
      ElementsAre("alpha", "blocks.0.scale", "blocks.0.attn.weight", "blocks.0.attn.bias",
                  "blocks.1.scale", "blocks.1.attn.weight", "blocks.1.attn.bias", "head.weight"));
  EXPECT_EQ(net.parameters().size(), 8u);
  EXPECT_EQ(net.num_parameters(), 1 + 2 * (2 + 6 + 2) + 2);
  // The handles are the members themselves: same TensorImpl.
  EXPECT_EQ(net.parameters()[7].impl(), net.head.weight.impl());
  EXPECT_EQ(net.parameters()[2].impl(), net.blocks[0].attn.weight.impl());
}

TEST(ModuleTest, ParametersAreLeavesThatRequireGrad) {
  Net net;
  for (const auto& [name, p] : net.named_parameters()) {
    EXPECT_TRUE(p.requires_grad()) << name;
    EXPECT_TRUE(p.is_leaf()) << name;
  }
}

TEST(ModuleTest, NamedModulesAndChildren) {
  Net net;
  std::vector<std::string> names;
  for (const auto& [name, m] : net.named_modules()) names.push_back(name + ":" + m->type_name());
  EXPECT_THAT(names,
              ElementsAre(":Net", "blocks:ModuleList", "blocks.0:Block", "blocks.0.attn:Linear",
                          "blocks.1:Block", "blocks.1.attn:Linear", "head:Linear"));
  ASSERT_EQ(net.children().size(), 2u);
  EXPECT_EQ(net.children()[0], &net.blocks);
  EXPECT_EQ(net.named_children()[1].first, "head");
  EXPECT_EQ(net.named_children()[1].second, &net.head);
}

TEST(ModuleTest, ConstModuleGivesParametersStateDictAndText) {
  Net net;
  const Net& c = net;
  EXPECT_EQ(c.parameters().size(), 8u);
  EXPECT_EQ(c.named_parameters()[0].first, "alpha");
  EXPECT_EQ(c.num_parameters(), 23);
  EXPECT_EQ(c.state_dict().size(), 8u);
  EXPECT_EQ(c.named_modules().size(), 7u);
  EXPECT_EQ(c.children().size(), 2u);
  EXPECT_EQ(c.named_children().size(), 2u);
  EXPECT_TRUE(c.is_training());
  EXPECT_THAT(c.to_string(), HasSubstr("# 23 parameters"));
  EXPECT_EQ(c.blocks.size(), 2u);
  EXPECT_EQ(c.blocks[1].type_name(), "Block");
}

TEST(ModuleTest, TiedWeightsAreListedOnceButSavedUnderEachName) {
  class Tied : public Module {
   public:
    Tied() : Module("Tied"), emb(4, 2), head(2, 4, {.bias = false}) {
      register_module("emb", emb);
      register_module("head", head);
      head.weight = emb.weight;  // weight tying, as in GPT-2
    }
    Embedding emb;
    Linear head;
  } tied;
  EXPECT_THAT(names_of(tied.named_parameters()), ElementsAre("emb.weight"));
  EXPECT_EQ(tied.num_parameters(), 8);
  EXPECT_THAT(tied.state_dict().keys(), ElementsAre("emb.weight", "head.weight"));
  // Loading writes the shared storage (twice, with the same values).
  StateDict sd;
  const Tensor w = arange(8, kFloat32).reshape({4, 2});
  sd.insert("emb.weight", w);
  sd.insert("head.weight", w);
  tied.load_state_dict(sd);
  EXPECT_EQ(tied.head.weight.to_vector<float>(), w.to_vector<float>());
}

TEST(ModuleTest, StateDictSharesStorageAndRoundTrips) {
  Net a(1), b(2);
  const StateDict sd = a.state_dict();
  EXPECT_THAT(sd.keys(), ElementsAre("alpha", "blocks.0.scale", "blocks.0.attn.weight",
                                     "blocks.0.attn.bias", "blocks.1.scale", "blocks.1.attn.weight",
                                     "blocks.1.attn.bias", "head.weight"));
  for (const auto& [name, t] : sd) {
    EXPECT_FALSE(t.requires_grad()) << name;
    EXPECT_EQ(t.storage(), a.state_dict().at(name).storage()) << name;
  }
  EXPECT_EQ(sd.at("head.weight").storage(), a.head.weight.storage());
  EXPECT_NE(as_doubles(a.head.weight), as_doubles(b.head.weight));
  const LoadResult r = b.load_state_dict(sd);
  EXPECT_TRUE(r.missing_keys.empty());
  EXPECT_TRUE(r.unexpected_keys.empty());
  for (const auto& [name, t] : b.named_parameters()) {
    EXPECT_EQ(as_doubles(t), as_doubles(sd.at(name))) << name;
    EXPECT_TRUE(t.requires_grad()) << name;
    EXPECT_TRUE(t.is_leaf()) << name;
  }
  // A copy, not a re-binding: b's parameters keep their own storage.
  EXPECT_NE(b.head.weight.storage(), a.head.weight.storage());
  EXPECT_TRUE(grad_mode_enabled());
  // The same input now gives the same output.
  Generator gen(3);
  const Tensor x = randn({4, 3}, kFloat32, gen);
  EXPECT_EQ(as_doubles(a(x)), as_doubles(b(x)));
}

TEST(ModuleTest, StrictLoadListsEveryProblemAndLoadsNothing) {
  Net a(1), b(2);
  const std::vector<double> before = as_doubles(b.head.weight);
  StateDict sd;
  for (const auto& [name, t] : a.state_dict()) {
    if (name == "blocks.1.scale") continue;  // missing
    if (name == "blocks.0.attn.weight") {
      sd.insert(name, zeros({3, 2}));  // transposed shape
    } else if (name == "head.weight") {
      sd.insert(name, zeros({2}));  // wrong rank
    } else {
      sd.insert(name, t);
    }
  }
  sd.insert("blocks.2.scale", ones({2}));  // unexpected
  sd.insert("bogus", ones({1}));           // unexpected
  EXPECT_TG_THROW(b.load_state_dict(sd), ValueError, "load_state_dict", "Net",
                  "missing key: blocks.1.scale", "unexpected key: blocks.2.scale",
                  "unexpected key: bogus",
                  "shape mismatch for blocks.0.attn.weight: expected shape (2, 3), got (3, 2)",
                  "shape mismatch for head.weight: expected shape (1, 2), got (2)");
  EXPECT_EQ(as_doubles(b.head.weight), before);  // nothing was loaded
  EXPECT_NE(as_doubles(b.blocks[0].attn.bias), as_doubles(a.blocks[0].attn.bias));
}

TEST(ModuleTest, StrictLoadRejectsAMissingKeyAlone) {
  Net a(1), b(2);
  StateDict sd;
  for (const auto& [name, t] : a.state_dict()) {
    if (name != "alpha") sd.insert(name, t);
  }
  EXPECT_TG_THROW(b.load_state_dict(sd), ValueError, "missing key: alpha");
  StateDict extra = a.state_dict();
  extra.insert("head.bias", zeros({1}));
  EXPECT_TG_THROW(b.load_state_dict(extra), ValueError, "unexpected key: head.bias");
}

TEST(ModuleTest, NonStrictLoadsWhatMatchesAndReportsTheRest) {
  Net a(1), b(2);
  StateDict sd;
  for (const auto& [name, t] : a.state_dict()) {
    if (name != "head.weight") sd.insert(name, t);
  }
  sd.insert("extra.weight", ones({2}));
  const std::vector<double> head_before = as_doubles(b.head.weight);
  const LoadResult r = b.load_state_dict(sd, /*strict=*/false);
  EXPECT_THAT(r.missing_keys, ElementsAre("head.weight"));
  EXPECT_THAT(r.unexpected_keys, ElementsAre("extra.weight"));
  EXPECT_EQ(as_doubles(b.head.weight), head_before);
  EXPECT_EQ(as_doubles(b.blocks[1].attn.weight), as_doubles(a.blocks[1].attn.weight));
}

TEST(ModuleTest, NonStrictStillRejectsShapeMismatches) {
  Net b;
  StateDict sd;
  sd.insert("head.weight", zeros({2, 1}));
  sd.insert("alpha", Tensor());
  EXPECT_TG_THROW(b.load_state_dict(sd, false), ValueError,
                  "shape mismatch for head.weight: expected shape (1, 2), got (2, 1)",
                  "alpha: the state dict holds an undefined tensor");
}

TEST(ModuleTest, LoadConvertsDtypes) {
  Linear lin(2, 2);
  StateDict sd;
  sd.insert("weight", tensor({0.1, 0.2, 0.3, 1.0 / 3.0}, {2, 2}));  // float64
  sd.insert("bias", tensor({1, 2}, {2}));                           // int64
  lin.load_state_dict(sd);
  EXPECT_EQ(lin.weight.dtype(), kFloat32);
  EXPECT_EQ(lin.weight.to_vector<float>(), (std::vector<float>{0.1f, 0.2f, 0.3f, 1.0f / 3.0f}));
  EXPECT_EQ(lin.bias.to_vector<float>(), (std::vector<float>{1.f, 2.f}));
}

TEST(ModuleTest, TrainAndEvalPropagateToEveryDescendant) {
  Net net;
  auto all_modes = [&] {
    std::vector<bool> modes;
    for (const auto& [name, m] : net.named_modules()) modes.push_back(m->is_training());
    return modes;
  };
  EXPECT_EQ(all_modes(), std::vector<bool>(7, true));
  EXPECT_EQ(&net.eval(), &net);
  EXPECT_EQ(all_modes(), std::vector<bool>(7, false));
  net.blocks.train();
  EXPECT_FALSE(net.is_training());
  EXPECT_TRUE(net.blocks[1].attn.is_training());
  EXPECT_FALSE(net.head.is_training());
  net.train();
  EXPECT_EQ(all_modes(), std::vector<bool>(7, true));
}

TEST(ModuleTest, ZeroGradResetsGradientsToUndefined) {
  Chain chain;
  Generator gen(5);
  sum(chain(randn({4, 3}, kFloat32, gen))).backward();
  for (const auto& [name, p] : chain.named_parameters()) EXPECT_TRUE(p.grad().defined()) << name;
  chain.zero_grad();
  for (const auto& [name, p] : chain.named_parameters()) EXPECT_FALSE(p.grad().defined()) << name;
}

TEST(ModuleTest, PrintsTheTreeLikePyTorchWithTheParameterCount) {
  Net net;
  const std::string expected =
      "Net(\n"
      "  (blocks): ModuleList(\n"
      "    (0): Block(\n"
      "      (attn): Linear(in_features=3, out_features=2, bias=True)\n"
      "    )\n"
      "    (1): Block(\n"
      "      (attn): Linear(in_features=3, out_features=2, bias=True)\n"
      "    )\n"
      "  )\n"
      "  (head): Linear(in_features=2, out_features=1, bias=False)\n"
      ")  # 23 parameters";
  EXPECT_EQ(net.to_string(), expected);
  EXPECT_EQ(fmt::format("{}", net), expected);
  std::ostringstream os;
  os << net;
  EXPECT_EQ(os.str(), expected);
  EXPECT_EQ(fmt::format("{}", net.head),
            "Linear(in_features=2, out_features=1, bias=False)  # 2 parameters");
  EXPECT_EQ(ReLU().to_string(), "ReLU()  # 0 parameters");
}

TEST(ModuleTest, PrintsMultiLineExtraReprBeforeChildren) {
  class Custom : public Module {
   public:
    Custom() : Module("Custom"), lin(1, 1) { register_module("lin", lin); }
    std::string extra_repr() const override { return "a=1\nb=2"; }
    Linear lin;
  } custom;
  EXPECT_EQ(custom.to_string(),
            "Custom(\n  a=1\n  b=2\n  (lin): Linear(in_features=1, out_features=1, bias=True)\n)"
            "  # 2 parameters");
  class OneParam : public Module {
   public:
    OneParam() : Module("OneParam") { register_parameter("w", w, ones({})); }
    Tensor w;
  } one;
  EXPECT_EQ(one.to_string(), "OneParam()  # 1 parameter");
}

TEST(ModuleTest, ModuleListNamesItemsByPosition) {
  ModuleList<UnaryModule> list;
  list.push_back(std::make_unique<ReLU>());
  Linear& lin = list.emplace_back<Linear>(2, 3);
  EXPECT_EQ(list.size(), 2u);
  EXPECT_FALSE(list.empty());
  EXPECT_EQ(&list[1], &lin);
  EXPECT_THAT(names_of(list.named_parameters()), ElementsAre("1.weight", "1.bias"));
  int n = 0;
  for (const auto& item : list) n += item->type_name() == "ReLU" ? 1 : 10;
  EXPECT_EQ(n, 11);
  EXPECT_TG_THROW(list[2], IndexError, "ModuleList", "index 2", "size 2");
  EXPECT_TG_THROW(list.push_back(nullptr), ValueError, "ModuleList::push_back", "null");
}

TEST(ModuleTest, RegistrationErrorsNameTheModuleAndTheName) {
  class Bad : public Module {
   public:
    Bad() : Module("Bad") {}
    void add(const std::string& name, const Tensor& v) { register_parameter(name, slot, v); }
    void add_child(const std::string& name) { register_module(name, child); }
    void add_self() { register_module("me", *this); }
    Tensor slot;
    ReLU child;
  } bad;
  bad.add("w", zeros({1}));
  EXPECT_TG_THROW(bad.add("w", zeros({1})), ValueError, "register_parameter", "Bad", "'w'");
  EXPECT_TG_THROW(bad.add("a.b", zeros({1})), ValueError, "register_parameter", "'a.b'", "'.'");
  EXPECT_TG_THROW(bad.add("", zeros({1})), ValueError, "register_parameter", "non-empty");
  EXPECT_TG_THROW(bad.add("i", zeros({1}, kInt64)), DTypeError, "register_parameter", "'i'",
                  "int64");
  EXPECT_TG_THROW(bad.add("u", Tensor()), ValueError, "register_parameter", "'u'", "undefined");
  EXPECT_TG_THROW(bad.add_child("w"), ValueError, "register_module", "Bad", "'w'");
  EXPECT_TG_THROW(bad.add_self(), ValueError, "register_module", "own child");
}

TEST(ModuleTest, StateDictErrors) {
  StateDict sd;
  sd.insert("a", zeros({1}));
  EXPECT_TG_THROW(sd.insert("a", zeros({1})), ValueError, "StateDict::insert", "'a'");
  EXPECT_TG_THROW(sd.at("b"), IndexError, "StateDict::at", "'b'", "1 entries");
  EXPECT_TG_THROW(StateDict({{"x", zeros({1})}, {"x", zeros({1})}}), ValueError, "'x'");
  EXPECT_TRUE(sd.contains("a"));
  EXPECT_EQ(sd.find("b"), nullptr);
  EXPECT_EQ(sd.size(), 1u);
  EXPECT_FALSE(sd.empty());
  EXPECT_EQ(sd.items()[0].first, "a");
}

}  // namespace
}  // namespace tg::nn
