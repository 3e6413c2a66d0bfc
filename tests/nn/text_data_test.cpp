// tests/nn/text_data_test.cpp — CharTokenizer (UTF-8, vocabulary, JSON) and TextDataset.
#include "nn/text_data.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "test_util.h"

namespace tg::nn {
namespace {

namespace fs = std::filesystem;

TEST(CharTokenizerTest, VocabularyIsSortedDistinctCodePoints) {
  const CharTokenizer t("hello");
  EXPECT_EQ(t.vocab_size(), 4);
  EXPECT_EQ(t.vocab(), (std::vector<char32_t>{U'e', U'h', U'l', U'o'}));
  EXPECT_EQ(t.encode("hole"), (std::vector<int64_t>{1, 3, 2, 0}));
  EXPECT_EQ(t.decode(std::vector<int64_t>{2, 0}), "le");
  EXPECT_EQ(t.decode(t.encode("hellohello")), "hellohello");
  const Tensor ids = t.encode_tensor("oh");
  EXPECT_EQ(ids.dtype(), kInt64);
  EXPECT_EQ(ids.shape(), Shape({2}));
  EXPECT_EQ(ids.to_vector<int64_t>(), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(t.decode(ids), "oh");
}

TEST(CharTokenizerTest, DecodesMultiByteUtf8) {
  // 'a' (1 byte), 'é' U+00E9 (2), '€' U+20AC (3), '😀' U+1F600 (4), '\n' (1).
  const std::string text = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\n\xc3\xa9";
  const CharTokenizer t(text);
  EXPECT_EQ(t.vocab(), (std::vector<char32_t>{U'\n', U'a', 0xE9, 0x20AC, 0x1F600}));
  EXPECT_EQ(t.encode(text), (std::vector<int64_t>{1, 2, 3, 4, 0, 2}));
  EXPECT_EQ(t.decode(t.encode(text)), text);
  // The boundaries of each encoding length round-trip too.
  const std::string edges =
      "\x7f\xc2\x80\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf\xf0\x90\x80\x80\xf4\x8f\xbf\xbf";
  const CharTokenizer e(edges);
  EXPECT_EQ(e.vocab(),
            (std::vector<char32_t>{0x7F, 0x80, 0x7FF, 0x800, 0xFFFF, 0x10000, 0x10FFFF}));
  EXPECT_EQ(e.decode(e.encode(edges)), edges);
}

TEST(CharTokenizerTest, EmptyText) {
  const CharTokenizer t("");
  EXPECT_EQ(t.vocab_size(), 0);
  EXPECT_TRUE(t.encode("").empty());
  EXPECT_EQ(t.decode(std::vector<int64_t>{}), "");
}

TEST(CharTokenizerTest, InvalidUtf8NamesTheByteOffset) {
  EXPECT_TG_THROW(CharTokenizer("ab\xff"), ValueError, "CharTokenizer", "invalid UTF-8",
                  "byte offset 2", "0xff", "cannot start");
  EXPECT_TG_THROW(CharTokenizer("ab\x80"), ValueError, "byte offset 2", "0x80");
  EXPECT_TG_THROW(CharTokenizer("abc\xe2\x82"), ValueError, "byte offset 3", "3-byte", "cut off");
  EXPECT_TG_THROW(CharTokenizer("\xc3("), ValueError, "byte offset 1", "continuation", "0x28");
  EXPECT_TG_THROW(CharTokenizer("x\xc0\xaf"), ValueError, "byte offset 1", "overlong", "U+002F");
  EXPECT_TG_THROW(CharTokenizer("\xe0\x80\x80"), ValueError, "overlong", "3-byte");
  EXPECT_TG_THROW(CharTokenizer("\xed\xa0\x80"), ValueError, "byte offset 0", "U+D800",
                  "not a Unicode character");
  EXPECT_TG_THROW(CharTokenizer("\xf4\x90\x80\x80"), ValueError, "U+110000");
  const CharTokenizer t("abc");
  EXPECT_TG_THROW(t.encode("ab\xfe"), ValueError, "CharTokenizer::encode", "byte offset 2");
}

TEST(CharTokenizerTest, UnknownCharacterNamesItAndItsPosition) {
  const CharTokenizer t("abc");
  EXPECT_TG_THROW(t.encode("abz"), ValueError, "CharTokenizer::encode", "'z' (U+007A)",
                  "position 2", "3 characters");
  // Positions count characters, not bytes: 'é' is two bytes but one position.
  const CharTokenizer u("a\xc3\xa9");
  EXPECT_TG_THROW(u.encode("\xc3\xa9\xc3\xa9\xe2\x82\xac"), ValueError, "'\xe2\x82\xac' (U+20AC)",
                  "position 2");
  EXPECT_TG_THROW(t.encode("a\n"), ValueError, "U+000A", "position 1");
}

TEST(CharTokenizerTest, DecodeRejectsBadIds) {
  const CharTokenizer t("abc");
  EXPECT_TG_THROW(t.decode(std::vector<int64_t>{0, 3}), IndexError, "CharTokenizer::decode", "id 3",
                  "position 1", "[0, 3)");
  EXPECT_TG_THROW(t.decode(std::vector<int64_t>{-1}), IndexError, "id -1", "position 0");
  EXPECT_TG_THROW(t.decode(tensor({1.0f})), DTypeError, "Tokenizer::decode", "int64", "float32");
}

TEST(CharTokenizerTest, JsonRoundTrip) {
  const std::string text = "say \"hi\"\\\n\t\xc3\xa9\xf0\x9f\x98\x80";
  const CharTokenizer t(text);
  const std::string json = t.to_json();
  EXPECT_THAT(json, ::testing::HasSubstr("\"type\":\"char\""));
  EXPECT_THAT(json, ::testing::HasSubstr(R"(\t\n \"\\)"));  // control chars escaped
  const CharTokenizer back = CharTokenizer::from_json(json);
  EXPECT_EQ(back.vocab(), t.vocab());
  EXPECT_EQ(back.encode(text), t.encode(text));
  EXPECT_EQ(CharTokenizer::from_json(R"({"type": "char", "vocab": "abc"})").encode("cab"),
            (std::vector<int64_t>{2, 0, 1}));
  EXPECT_EQ(CharTokenizer::from_json(CharTokenizer("").to_json()).vocab_size(), 0);
}

TEST(CharTokenizerTest, FromJsonRejectsBadInput) {
  EXPECT_TG_THROW(CharTokenizer::from_json("{nope"), ValueError, "CharTokenizer::from_json",
                  "not valid JSON");
  EXPECT_TG_THROW(CharTokenizer::from_json(R"({"type": "byte", "vocab": "ab"})"), ValueError,
                  "from_json", "expected", R"("type":"byte")");
  EXPECT_TG_THROW(CharTokenizer::from_json(R"({"type": "char", "vocab": [1, 2]})"), ValueError,
                  "from_json", "expected");
  EXPECT_TG_THROW(CharTokenizer::from_json("[]"), ValueError, "from_json", "expected");
  EXPECT_TG_THROW(CharTokenizer::from_json(R"({"type": "char", "vocab": "ba"})"), ValueError,
                  "sorted and distinct", "'a' (U+0061) comes after 'b' (U+0062)");
  EXPECT_TG_THROW(CharTokenizer::from_json(R"({"type": "char", "vocab": "aa"})"), ValueError,
                  "sorted and distinct");
}

TEST(CharTokenizerTest, ByteFallbackSpellsRareCharactersInBytes) {
  // 'a' twice, 'b' once, 春 once: with min_count 2 only 'a' has an id of its own (256).
  const CharTokenizer t("aab春a", {.byte_fallback = true, .min_count = 2});
  EXPECT_EQ(t.vocab(), std::vector<char32_t>{U'a'});
  EXPECT_EQ(t.vocab_size(), 257);
  EXPECT_EQ(t.first_char_id(), 256);
  EXPECT_EQ(t.encode("ab春"), (std::vector<int64_t>{256, 'b', 0xe6, 0x98, 0xa5}));
  EXPECT_EQ(t.decode(std::vector<int64_t>{256, 'b', 0xe6, 0x98, 0xa5}), "ab春");
  // A character never seen at all is no error either.
  EXPECT_EQ(t.decode(t.encode("z风")), "z风");
  // min_count 1 with the fallback: every character has an id, and strangers still encode.
  const CharTokenizer all("ab", {.byte_fallback = true});
  EXPECT_EQ(all.vocab_size(), 258);
  EXPECT_EQ(all.encode("bc"), (std::vector<int64_t>{257, 'c'}));
}

TEST(CharTokenizerTest, ByteFallbackRoundTripsRandomUtf8) {
  std::string corpus = "春眠不觉晓，处处闻啼鸟。";
  const CharTokenizer t(corpus, {.byte_fallback = true});
  uint32_t state = 12345;
  auto next = [&] { return state = state * 1664525u + 1013904223u; };
  for (int trial = 0; trial < 300; ++trial) {
    std::string text;
    for (int n = static_cast<int>(next() % 20); n > 0; --n) {
      const uint32_t kind = next() % 4;
      const char32_t cp = kind == 0   ? 0x20 + next() % 0x5F
                          : kind == 1 ? 0x4E00 + next() % 0x5200
                          : kind == 2 ? U"春眠不觉晓，"[next() % 6]
                                      : 0x10000 + next() % 0x10000;
      utf8::append(text, cp);
    }
    ASSERT_EQ(t.decode(t.encode(text)), text);
  }
}

TEST(CharTokenizerTest, ByteFallbackOptionsAndJson) {
  EXPECT_TG_THROW(CharTokenizer("ab", {.min_count = 2}), ValueError, "CharTokenizer",
                  "min_count 2 needs byte_fallback");
  EXPECT_TG_THROW(CharTokenizer("ab", {.byte_fallback = true, .min_count = 0}), ValueError,
                  "at least 1");
  const CharTokenizer t("aab春a", {.byte_fallback = true, .min_count = 2});
  EXPECT_EQ(t.to_json(), R"({"byte_fallback":true,"type":"char","vocab":"a"})");
  const CharTokenizer back = CharTokenizer::from_json(t.to_json());
  EXPECT_TRUE(back.byte_fallback());
  EXPECT_EQ(back.encode("ab春"), t.encode("ab春"));
  EXPECT_EQ(tokenizer_from_json(t.to_json())->encode("春"), t.encode("春"));
  EXPECT_TG_THROW(CharTokenizer::from_json(R"({"type": "char", "vocab": "a", "byte_fallback": 1})"),
                  ValueError, "from_json", "byte_fallback");
  EXPECT_TG_THROW(t.decode(std::vector<int64_t>{257}), IndexError, "id 257", "[0, 257)");
}

TEST(TextDatasetTest, AnyTokenizer) {
  const std::string text = "ab春ab春ab春ab春ab春";
  const CharTokenizer bytes_only("", {.byte_fallback = true});
  const TextDataset d(text, bytes_only, {.val_fraction = 0.2});
  EXPECT_EQ(d.tokenizer().vocab_size(), 256);
  EXPECT_EQ(d.split("train").numel() + d.split("val").numel(), 25);  // 5 bytes per "ab春"
  EXPECT_EQ(d.tokenizer().decode(d.split("train")) + d.tokenizer().decode(d.split("val")), text);
}

// ---- TextDataset

TEST(TextDatasetTest, ContiguousSplit) {
  // 20 characters, vocab "0123456789" -> ids equal the digits.
  const std::string text = "01234567890123456789";
  const TextDataset d(text, {.val_fraction = 0.25});
  EXPECT_EQ(d.tokenizer().vocab_size(), 10);
  EXPECT_EQ(d.split("train").to_vector<int64_t>(),
            (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4}));
  EXPECT_EQ(d.split("val").to_vector<int64_t>(), (std::vector<int64_t>{5, 6, 7, 8, 9}));
  // floor(n * fraction) ids go to validation: 0.1 of 19 is 1.9 -> 1.
  const TextDataset e(text.substr(0, 19));
  EXPECT_EQ(e.split("val").numel(), 1);
  EXPECT_EQ(e.split("train").numel(), 18);
  const TextDataset none(text, {.val_fraction = 0.0});
  EXPECT_EQ(none.split("val").numel(), 0);
}

TEST(TextDatasetTest, GetBatchShiftsTargetsByOne) {
  // Every id is its position (mod 10), so each window is an arithmetic run.
  std::string text;
  for (int i = 0; i < 200; ++i) text.push_back(static_cast<char>('0' + i % 10));
  const TextDataset d(text, {.val_fraction = 0.5});
  Generator gen(7);
  const Batch b = d.get_batch("train", 6, 5, gen);
  EXPECT_EQ(b.x.shape(), Shape({6, 5}));
  EXPECT_EQ(b.y.shape(), Shape({6, 5}));
  EXPECT_EQ(b.x.dtype(), kInt64);
  EXPECT_EQ(b.y.dtype(), kInt64);
  const auto x = b.x.to_vector<int64_t>();
  const auto y = b.y.to_vector<int64_t>();
  std::set<int64_t> starts;
  for (int r = 0; r < 6; ++r) {
    starts.insert(x[static_cast<size_t>(r * 5)]);
    for (int t = 0; t < 5; ++t) {
      const auto i = static_cast<size_t>(r * 5 + t);
      EXPECT_EQ(y[i], (x[i] + 1) % 10);
      if (t > 0) {
        EXPECT_EQ(x[i], (x[i - 1] + 1) % 10);
      }
    }
  }
  EXPECT_GT(starts.size(), 1u);  // random windows, not one repeated

  // The windows start where the generator says, in batch order.
  Generator replay(7);
  const auto train = d.split("train").to_vector<int64_t>();
  for (int r = 0; r < 6; ++r) {
    const int64_t start = replay.integer(0, 100 - 5);
    EXPECT_EQ(x[static_cast<size_t>(r * 5)], train[static_cast<size_t>(start)]);
  }
  // Same seed, same batch; the val split draws from its own ids.
  Generator again(7);
  EXPECT_EQ(d.get_batch("train", 6, 5, again).x.to_vector<int64_t>(), x);
  Generator g(1);
  EXPECT_EQ(d.get_batch("val", 2, 3, g).x.shape(), Shape({2, 3}));
}

TEST(TextDatasetTest, EveryWindowPositionIsReachable) {
  // With n = context + 2 there are exactly two windows; both must show up.
  const TextDataset d("abcde", {.val_fraction = 0.0});
  Generator gen(3);
  const Batch b = d.get_batch("train", 64, 3, gen);
  std::set<int64_t> firsts;
  const auto x = b.x.to_vector<int64_t>();
  const auto y = b.y.to_vector<int64_t>();
  for (size_t r = 0; r < 64; ++r) {
    firsts.insert(x[r * 3]);
    EXPECT_LE(y[r * 3 + 2], 4);  // the last target id is in range ('e' = 4)
  }
  EXPECT_EQ(firsts, (std::set<int64_t>{0, 1}));
  // n == context + 1: a single window, the whole split.
  const Batch one = d.get_batch("train", 2, 4, gen);
  EXPECT_EQ(one.x.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 0, 1, 2, 3}));
  EXPECT_EQ(one.y.to_vector<int64_t>(), (std::vector<int64_t>{1, 2, 3, 4, 1, 2, 3, 4}));
}

TEST(TextDatasetTest, Errors) {
  const TextDataset d("abcdefghij", {.val_fraction = 0.3});
  Generator gen(0);
  EXPECT_TG_THROW(d.get_batch("val", 2, 3, gen), ValueError, "get_batch", "\"val\"", "3 ids",
                  "context 3", "at least 4");
  EXPECT_TG_THROW(d.get_batch("train", 1, 7, gen), ValueError, "\"train\"", "7 ids", "context 7",
                  "at least 8");
  EXPECT_TG_THROW(d.get_batch("test", 1, 2, gen), ValueError, "TextDataset",
                  "\"train\" or "
                  "\"val\"",
                  "\"test\"");
  EXPECT_TG_THROW(d.get_batch("train", 0, 2, gen), ValueError, "batch 0");
  EXPECT_TG_THROW(d.get_batch("train", 2, 0, gen), ValueError, "context 0");
  EXPECT_TG_THROW(TextDataset("abc", {.val_fraction = 1.0}), ValueError, "val_fraction", "[0, 1)",
                  "1");
  EXPECT_TG_THROW(TextDataset("abc", {.val_fraction = -0.1}), ValueError, "-0.1");
  EXPECT_TG_THROW(TextDataset("abc", CharTokenizer("ab")), ValueError, "'c'", "position 2");
}

TEST(TextDatasetTest, WithAGivenTokenizer) {
  const CharTokenizer t = CharTokenizer::from_json(CharTokenizer("xyzab").to_json());
  const TextDataset d("abba", t, {.val_fraction = 0.0});
  EXPECT_EQ(d.split("train").to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(d.tokenizer().vocab_size(), 5);
}

TEST(TextDatasetTest, FromFile) {
  const fs::path path =
      fs::path(::testing::TempDir()) / fmt::format("tapegrad_text_{}.txt", ::getpid());
  std::ofstream(path, std::ios::binary) << "cat\ndog\n";
  const TextDataset d = TextDataset::from_file(path.string(), {.val_fraction = 0.25});
  fs::remove(path);
  EXPECT_EQ(d.tokenizer().decode(d.split("train")), "cat\ndo");
  EXPECT_EQ(d.tokenizer().decode(d.split("val")), "g\n");

  EXPECT_TG_THROW(TextDataset::from_file(path.string()), ValueError, "TextDataset", "cannot open",
                  path.string(), "No such file", "UTF-8 text file");
  EXPECT_TG_THROW(TextDataset::from_file("/usr/share/dict/no-such-list"), ValueError,
                  "/usr/share/dict/no-such-list", "apt-get install wamerican");
}

TEST(TextDatasetTest, RealWordList) {
  const std::string path = "/usr/share/dict/words";
  if (!fs::exists(path)) GTEST_SKIP() << path << " is not installed (apt-get install wamerican)";
  const TextDataset d = TextDataset::from_file(path);
  EXPECT_GT(d.tokenizer().vocab_size(), 26);
  EXPECT_LT(d.tokenizer().vocab_size(), 256);
  EXPECT_GT(d.split("train").numel(), 100000);
  Generator gen(0);
  const Batch b = d.get_batch("val", 4, 64, gen);
  EXPECT_EQ(b.x.shape(), Shape({4, 64}));
}

}  // namespace
}  // namespace tg::nn
