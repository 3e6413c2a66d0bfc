// file: examples/course/ddp_ring.cpp
// Chapter 25: ring all-reduce, simulated in one process. p = 4 ranks each hold a vector cut into
// p chunks (one number each here); rank r's numbers are 1, 2, 3, 4 times 10^r, so the digits of
// a partial sum say which ranks are in it. p - 1 steps of reduce-scatter leave each rank one
// chunk summed over every rank; p - 1 steps of all-gather pass the sums around the ring. Then
// what each rank sends, as p grows, against gathering everything on one rank.
#include <fmt/format.h>

#include <string>
#include <vector>

namespace {

constexpr int p = 4;
using Buffers = std::vector<std::vector<long>>;  // [rank][chunk]

/// One line: every rank's buffer, a star after the chunk it has just received.
void show(const std::string& label, const Buffers& data, const std::vector<int>& received) {
  std::string line = fmt::format("{:<16}", label);
  for (int r = 0; r < p; ++r) {
    line += "  ";
    for (int c = 0; c < p; ++c) {
      line += fmt::format("{:>4}{}", data[r][c], !received.empty() && received[r] == c ? '*' : ' ');
    }
  }
  line.erase(line.find_last_not_of(' ') + 1);
  fmt::print("{}\n", line);
}

int mod(int a) { return ((a % p) + p) % p; }

}  // namespace

int main() {
  Buffers data(p, std::vector<long>(p));
  long scale = 1;
  for (int r = 0; r < p; ++r, scale *= 10) {
    for (int c = 0; c < p; ++c) data[r][c] = (c + 1) * scale;
  }
  std::vector<long> want(p, 0);  // the all-reduce's answer: the sum over ranks, chunk by chunk
  for (int c = 0; c < p; ++c) {
    for (int r = 0; r < p; ++r) want[c] += data[r][c];
  }
  fmt::print("{:<16}  {:<20}  {:<20}  {:<20}  rank 3\n", "", "rank 0", "rank 1", "rank 2");
  show("start", data, {});

  // Reduce-scatter. In step s every rank r sends chunk (r - s) mod p to rank r + 1, which adds
  // it to its own copy of that chunk. All p messages of a step travel at once: each rank sends
  // what it held before the step.
  for (int s = 0; s < p - 1; ++s) {
    std::vector<long> message(p);
    std::vector<int> received(p);
    for (int r = 0; r < p; ++r) message[r] = data[r][mod(r - s)];
    for (int r = 0; r < p; ++r) {
      data[mod(r + 1)][mod(r - s)] += message[r];
      received[mod(r + 1)] = mod(r - s);
    }
    show(fmt::format("reduce-scatter {}", s + 1), data, received);
  }
  // Now rank r holds the whole sum of chunk (r + 1) mod p. All-gather: in step s rank r sends
  // chunk (r + 1 - s) mod p, complete, to rank r + 1, which keeps it as it is.
  for (int s = 0; s < p - 1; ++s) {
    std::vector<long> message(p);
    std::vector<int> received(p);
    for (int r = 0; r < p; ++r) message[r] = data[r][mod(r + 1 - s)];
    for (int r = 0; r < p; ++r) {
      data[mod(r + 1)][mod(r + 1 - s)] = message[r];
      received[mod(r + 1)] = mod(r + 1 - s);
    }
    show(fmt::format("all-gather {}", s + 1), data, received);
  }
  bool all = true;
  for (int r = 0; r < p; ++r) all = all && data[r] == want;
  fmt::print("every rank holds the sum over the ranks ({} {} {} {}): {}\n", want[0], want[1],
             want[2], want[3], all);

  // What it costs, for a vector of N bytes on q ranks: 2(q - 1) steps, each sending N / q bytes
  // from every rank at once. Gathering on rank 0 and sending the sum back instead: rank 0
  // receives (q - 1) N bytes and sends as many.
  fmt::print("{:>5} {:>16} {:>22} {:>26}\n", "ranks", "steps (messages)", "ring: each rank sends",
             "via rank 0: rank 0 sends");
  for (const long q : {2L, 4L, 8L, 64L, 1024L}) {
    fmt::print("{:>5} {:>16} {:>20.4f} N {:>24} N\n", q, 2 * (q - 1),
               2.0 * static_cast<double>(q - 1) / static_cast<double>(q), q - 1);
  }
}
