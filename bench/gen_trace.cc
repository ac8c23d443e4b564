// tt_gen_trace: a deterministic synthetic trace generator shaped like a
// pod-scale ML profile (XProf/TPU style), written as Chrome Trace Event JSON.
//
//   tt_gen_trace --events 1000000 --hosts 4 --devices 4 --seed 1 -o t.json.gz
//
// Shape (per host `tpu-host-HHHH`):
//   - pid "<host> host": threads python (framework ops, nested X, instants),
//     tf_data workers (input pipeline, nested X), one launcher thread per
//     device (short X with a flow start `s` inside), one HostToDevice thread
//     per device (B/E pairs with a flow start inside), counters "Memory"
//     (in_use, peak) and "Infeed queue" (depth).
//   - pid "<host> /device:TPU:N" per device: threads Steps, XLA Modules, XLA
//     Ops; ops are nested trees of depth 3..6 with log-normal durations
//     (1 ns .. milliseconds, some 0); flow ends `f` with "bp":"e" bind host
//     launches to modules and host transfers to infeed ops; counter "HBM"
//     (in_use).
//   - M events name every process and thread and give sort indexes.
// Timestamps are microseconds with up to 3 decimals (integer nanoseconds
// internally). Every thread's events are written in time order (parents
// before children); threads are interleaved in per-step chunks, so the file
// as a whole is not sorted. Output streams through a fixed buffer: memory
// does not grow with --events.
//
// Determinism: the output is a pure function of the flags (own PRNG, own
// normal sampler; only libm log/exp/cos/sqrt are used).
//
// --csv PATH additionally writes one CSV row per non-metadata event
// (ph,pid,tid,ts_ns,dur_ns,cat,name,id,args) for the SQLite baseline.
// --meta PATH writes a small JSON summary (span, counts, a busy track).
// --memory-rate P adds Kineto-style "[memory]" instants on a "Memory" thread
// of each device (Device Type 1, Device Id = global device index): before a
// top-level XLA op, with probability P, an allocation (addresses reused LIFO
// like a caching allocator); after it, with probability P, the free of a
// random live allocation with probability 0.99 P. Totals are included.

#include <zlib.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <boost/program_options.hpp>

namespace {

// ---------------------------------------------------------------- PRNG ---
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    uint64_t x = seed;
    for (auto& w : s_) w = SplitMix(x);
  }
  uint64_t Next() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }
  // [0, 1)
  double U01() { return (Next() >> 11) * 0x1.0p-53; }
  // [0, n)
  uint64_t Below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >> 64);
  }
  bool Chance(double p) { return U01() < p; }
  double Normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u1 = U01();
    if (u1 < 1e-300) u1 = 1e-300;
    const double u2 = U01();
    const double r = std::sqrt(-2.0 * std::log(u1));
    spare_ = r * std::sin(2 * M_PI * u2);
    has_spare_ = true;
    return r * std::cos(2 * M_PI * u2);
  }
  // Log-normal with the given median and log-space sigma.
  double LogNormal(double median, double sigma) {
    return median * std::exp(sigma * Normal());
  }
  double Exp() { return -std::log(1.0 - U01()); }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static uint64_t SplitMix(uint64_t& x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::array<uint64_t, 4> s_{};
  double spare_ = 0;
  bool has_spare_ = false;
};

// -------------------------------------------------------------- output ---
// A byte sink over a plain FILE* or a gzFile, with a large buffer.
class Sink {
 public:
  static constexpr size_t kCap = 1 << 20;
  static constexpr size_t kSlack = 8192;  // one record always fits

  bool Open(const std::string& path, int gz_level) {
    path_ = path;
    buf_.reset(new char[kCap + kSlack]);
    const bool gz = path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
    if (gz) {
      char mode[8];
      std::snprintf(mode, sizeof mode, "wb%d", std::clamp(gz_level, 0, 9));
      gz_ = gzopen(path.c_str(), mode);
      if (!gz_) return false;
      gzbuffer(gz_, 1 << 18);
    } else {
      f_ = std::fopen(path.c_str(), "wb");
      if (!f_) return false;
    }
    return true;
  }
  char* p() { return buf_.get() + n_; }
  void Advance(char* end) { n_ = end - buf_.get(); }
  void MaybeFlush() {
    if (n_ >= kCap) Flush();
  }
  bool Flush() {
    if (n_ == 0) return ok_;
    raw_bytes_ += n_;
    if (gz_) {
      if (gzwrite(gz_, buf_.get(), static_cast<unsigned>(n_)) != static_cast<int>(n_)) ok_ = false;
    } else if (std::fwrite(buf_.get(), 1, n_, f_) != n_) {
      ok_ = false;
    }
    n_ = 0;
    return ok_;
  }
  bool Close() {
    Flush();
    if (gz_) {
      if (gzclose(gz_) != Z_OK) ok_ = false;
      gz_ = nullptr;
    }
    if (f_) {
      if (std::fclose(f_) != 0) ok_ = false;
      f_ = nullptr;
    }
    return ok_;
  }
  uint64_t raw_bytes() const { return raw_bytes_ + n_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::unique_ptr<char[]> buf_;
  size_t n_ = 0;
  FILE* f_ = nullptr;
  gzFile gz_ = nullptr;
  bool ok_ = true;
  uint64_t raw_bytes_ = 0;
};

inline char* Put(char* p, std::string_view s) {
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
}
inline char* PutU(char* p, uint64_t v) { return std::to_chars(p, p + 24, v).ptr; }
inline char* PutI(char* p, int64_t v) { return std::to_chars(p, p + 24, v).ptr; }
// Integer nanoseconds as decimal microseconds, no trailing zeros.
inline char* PutUs(char* p, int64_t ns) {
  if (ns < 0) {
    *p++ = '-';
    ns = -ns;
  }
  p = PutU(p, static_cast<uint64_t>(ns / 1000));
  int r = static_cast<int>(ns % 1000);
  if (r) {
    *p++ = '.';
    char d[3] = {char('0' + r / 100), char('0' + r / 10 % 10), char('0' + r % 10)};
    int len = d[2] != '0' ? 3 : d[1] != '0' ? 2 : 1;
    std::memcpy(p, d, len);
    p += len;
  }
  return p;
}

// Small scratch formatter for names and args.
struct Scratch {
  char b[512];
  size_t n = 0;
  void Clear() { n = 0; }
  Scratch& S(std::string_view s) {
    std::memcpy(b + n, s.data(), s.size());
    n += s.size();
    return *this;
  }
  Scratch& U(uint64_t v) {
    n = std::to_chars(b + n, b + sizeof b, v).ptr - b;
    return *this;
  }
  std::string_view View() const { return {b, n}; }
};

// --------------------------------------------------------------- model ---
struct Ev {
  char ph = 'X';
  uint32_t pid = 0;
  uint32_t tid = 0;
  bool has_tid = true;
  int64_t ts = 0;
  int64_t dur = -1;  // written for X only
  std::string_view name;
  std::string_view cat;
  uint64_t id = 0;   // flows
  bool has_id = false;
  char scope = 0;    // instants
  bool bind_enclosing = false;
  std::string_view args;  // JSON object text or empty
};

struct Counts {
  uint64_t total = 0, meta = 0, x = 0, b = 0, e = 0, i = 0, c = 0, s = 0, f = 0;
};

class Writer {
 public:
  Writer(Sink* json, Sink* csv) : json_(json), csv_(csv) {}

  void Begin() {
    json_->Advance(Put(json_->p(), "{\"traceEvents\":[\n"));
    if (csv_) csv_->Advance(Put(csv_->p(), "ph,pid,tid,ts_ns,dur_ns,cat,name,id,args\n"));
  }
  void End() {
    json_->Advance(Put(json_->p(), "\n],\"displayTimeUnit\":\"ns\"}\n"));
  }

  void Emit(const Ev& e) {
    char* p = json_->p();
    if (counts.total) p = Put(p, ",\n");
    p = Put(p, "{\"ph\":\"");
    *p++ = e.ph;
    p = Put(p, "\",");
    if (e.has_id) {
      p = Put(p, "\"id\":");
      p = PutU(p, e.id);
      *p++ = ',';
    }
    if (e.bind_enclosing) p = Put(p, "\"bp\":\"e\",");
    p = Put(p, "\"pid\":");
    p = PutU(p, e.pid);
    if (e.has_tid) {
      p = Put(p, ",\"tid\":");
      p = PutU(p, e.tid);
    }
    p = Put(p, ",\"ts\":");
    p = PutUs(p, e.ts);
    if (e.ph == 'X') {
      p = Put(p, ",\"dur\":");
      p = PutUs(p, e.dur);
    }
    if (!e.name.empty()) {
      p = Put(p, ",\"name\":\"");
      p = Put(p, e.name);
      *p++ = '"';
    }
    if (!e.cat.empty()) {
      p = Put(p, ",\"cat\":\"");
      p = Put(p, e.cat);
      *p++ = '"';
    }
    if (e.scope) {
      p = Put(p, ",\"s\":\"");
      *p++ = e.scope;
      *p++ = '"';
    }
    if (!e.args.empty()) {
      p = Put(p, ",\"args\":");
      p = Put(p, e.args);
    }
    *p++ = '}';
    json_->Advance(p);
    json_->MaybeFlush();

    ++counts.total;
    switch (e.ph) {
      case 'M': ++counts.meta; break;
      case 'X': ++counts.x; break;
      case 'B': ++counts.b; break;
      case 'E': ++counts.e; break;
      case 'i': ++counts.i; break;
      case 'C': ++counts.c; break;
      case 's': ++counts.s; break;
      case 'f': ++counts.f; break;
    }
    if (e.ph == 'X') max_dur = std::max(max_dur, e.dur);
    if (e.ph != 'M') {
      min_ts = std::min(min_ts, e.ts);
      max_end = std::max(max_end, e.ts + std::max<int64_t>(e.dur, 0));
    }
    if (csv_ && e.ph != 'M') EmitCsv(e);
  }

  Counts counts;
  int64_t max_dur = 0;
  int64_t min_ts = INT64_MAX;
  int64_t max_end = INT64_MIN;

 private:
  void EmitCsv(const Ev& e) {
    char* p = csv_->p();
    *p++ = e.ph;
    *p++ = ',';
    p = PutU(p, e.pid);
    *p++ = ',';
    p = PutU(p, e.has_tid ? e.tid : 0);
    *p++ = ',';
    p = PutI(p, e.ts);
    *p++ = ',';
    p = PutI(p, e.ph == 'X' ? e.dur : 0);
    *p++ = ',';
    p = Put(p, e.cat);
    *p++ = ',';
    p = Put(p, e.name);
    *p++ = ',';
    p = PutU(p, e.has_id ? e.id : 0);
    *p++ = ',';
    if (!e.args.empty()) {
      *p++ = '"';
      for (char c : e.args) {
        if (c == '"') *p++ = '"';
        *p++ = c;
      }
      *p++ = '"';
    }
    *p++ = '\n';
    csv_->Advance(p);
    csv_->MaybeFlush();
  }

  Sink* json_;
  Sink* csv_;
};

// ----------------------------------------------------------- generator ---
constexpr std::string_view kHloKinds[] = {
    "fusion", "fusion", "fusion", "fusion", "fusion", "fusion", "convolution",
    "dot", "dot", "copy", "copy-start", "copy-done", "all-reduce", "all-gather",
    "reduce-scatter", "reduce", "broadcast", "transpose", "dynamic-update-slice",
    "dynamic-slice", "custom-call", "select", "add", "multiply", "while",
    "conditional", "collective-permute", "bitcast", "slice", "concatenate"};
constexpr size_t kNumHloKinds = sizeof(kHloKinds) / sizeof(kHloKinds[0]);

constexpr std::string_view kFrameworkOps[] = {
    "jax.grad", "optax.adam", "flax.linen.Dense", "flax.linen.Conv",
    "jax.lax.scan", "jax.numpy.einsum", "pjit", "device_put",
    "tree_util.tree_map", "loss_fn", "apply_gradients", "shard_map"};
constexpr std::string_view kPipelineOps[] = {
    "Iterator::Prefetch", "Iterator::Map", "Iterator::Batch",
    "Iterator::ParallelInterleave", "Iterator::Shuffle", "Iterator::TFRecord"};
constexpr std::string_view kModules[] = {
    "jit_train_step", "jit_eval_step", "jit_update_params", "jit_all_reduce_grads"};

struct Options {
  uint64_t events = 1'000'000;
  uint32_t hosts = 4;
  uint32_t devices = 4;
  uint64_t seed = 1;
  uint32_t ops_per_step = 1500;  // device ops per device per step
  int64_t base_us = 0;
  int gzip_level = 1;
  double memory_rate = 0;
  std::string out, csv, meta;
};

// Thread ids.
constexpr uint32_t kTidSteps = 1, kTidModules = 2, kTidOps = 3, kTidMemory = 4;
constexpr uint32_t kTidPython = 1, kTidDataBase = 10, kNumDataThreads = 2;
constexpr uint32_t kTidLaunchBase = 100, kTidXferBase = 200;

struct FlowRec {
  int64_t dev_ts;  // device-side bind point (start of the bound slice)
  uint64_t id;
  uint32_t dev;    // device index within the host
  bool module;     // module launch (else infeed transfer)
};

class Generator {
 public:
  Generator(const Options& o, Writer* w) : o_(o), w_(w), rng_(o.seed) {}

  uint32_t HostPid(uint32_t h) const { return h * (o_.devices + 1) + 1; }
  uint32_t DevPid(uint32_t h, uint32_t d) const { return h * (o_.devices + 1) + 2 + d; }

  void Run() {
    w_->Begin();
    EmitMetadata();
    int64_t step_start = o_.base_us * 1000 + 250'000;  // > max launch latency
    uint64_t last_step_events = 0;
    uint32_t step = 0;
    std::vector<std::vector<FlowRec>> flows(o_.devices);
    std::vector<int64_t> step_end_dev(o_.devices);
    while (w_->counts.total < o_.events) {
      const uint64_t remaining = o_.events - w_->counts.total;
      double scale = 1.0;
      if (last_step_events && remaining < last_step_events) {
        scale = static_cast<double>(remaining) / last_step_events;
      }
      const uint64_t before = w_->counts.total;
      int64_t step_end = step_start;
      // Devices first (hosts need their module start times for flows), one
      // chunk per host: each device lane, then the host lanes.
      for (uint32_t h = 0; h < o_.hosts; ++h) {
        for (auto& f : flows) f.clear();
        int64_t host_end = step_start;
        for (uint32_t d = 0; d < o_.devices; ++d) {
          step_end_dev[d] = DeviceStep(h, d, step, step_start, scale, &flows[d]);
          host_end = std::max(host_end, step_end_dev[d]);
        }
        HostStep(h, step, step_start, host_end, scale, flows);
        step_end = std::max(step_end, host_end);
      }
      // Steps lines are written once the step's end is known (all devices
      // synchronise at the end of a step).
      step_end += static_cast<int64_t>(rng_.LogNormal(20'000, 0.5));
      for (uint32_t h = 0; h < o_.hosts; ++h) {
        for (uint32_t d = 0; d < o_.devices; ++d) {
          Ev e;
          e.pid = DevPid(h, d);
          e.tid = kTidSteps;
          e.ts = step_start;
          e.dur = step_end - step_start;
          name_.Clear();
          name_.S("Step ").U(step);
          e.name = name_.View();
          args_.Clear();
          args_.S("{\"step_num\":").U(step).S("}");
          e.args = args_.View();
          w_->Emit(e);
        }
      }
      last_step_events = w_->counts.total - before;
      step_start = step_end + static_cast<int64_t>(rng_.LogNormal(50'000, 0.5));
      ++step;
    }
    steps_ = step;
    w_->End();
  }

  uint32_t steps() const { return steps_; }

 private:
  void Meta(uint32_t pid, uint32_t tid, bool thread, std::string_view what,
            std::string_view args) {
    Ev e;
    e.ph = 'M';
    e.pid = pid;
    e.tid = tid;
    e.ts = 0;
    e.name = what;
    e.args = args;
    (void)thread;
    w_->Emit(e);
  }
  void NameProcess(uint32_t pid, std::string_view name, uint32_t sort) {
    Scratch a;
    a.S("{\"name\":\"").S(name).S("\"}");
    Meta(pid, 0, false, "process_name", a.View());
    a.Clear();
    a.S("{\"sort_index\":").U(sort).S("}");
    Meta(pid, 0, false, "process_sort_index", a.View());
  }
  void NameThread(uint32_t pid, uint32_t tid, std::string_view name, uint32_t sort) {
    Scratch a;
    a.S("{\"name\":\"").S(name).S("\"}");
    Meta(pid, tid, true, "thread_name", a.View());
    a.Clear();
    a.S("{\"sort_index\":").U(sort).S("}");
    Meta(pid, tid, true, "thread_sort_index", a.View());
  }
  void EmitMetadata() {
    for (uint32_t h = 0; h < o_.hosts; ++h) {
      char host[32];
      std::snprintf(host, sizeof host, "tpu-host-%04u", h);
      Scratch n;
      n.S(host).S(" host");
      NameProcess(HostPid(h), n.View(), HostPid(h));
      NameThread(HostPid(h), kTidPython, "python", 0);
      for (uint32_t t = 0; t < kNumDataThreads; ++t) {
        n.Clear();
        n.S("tf_data_private_threadpool/").U(t);
        NameThread(HostPid(h), kTidDataBase + t, n.View(), 1 + t);
      }
      for (uint32_t d = 0; d < o_.devices; ++d) {
        n.Clear();
        n.S("tpu_launcher:").U(h * o_.devices + d);
        NameThread(HostPid(h), kTidLaunchBase + d, n.View(), 10 + d);
        n.Clear();
        n.S("HostToDevice:").U(h * o_.devices + d);
        NameThread(HostPid(h), kTidXferBase + d, n.View(), 100 + d);
      }
      for (uint32_t d = 0; d < o_.devices; ++d) {
        n.Clear();
        n.S(host).S(" /device:TPU:").U(h * o_.devices + d);
        NameProcess(DevPid(h, d), n.View(), DevPid(h, d));
        NameThread(DevPid(h, d), kTidSteps, "Steps", 0);
        NameThread(DevPid(h, d), kTidModules, "XLA Modules", 1);
        NameThread(DevPid(h, d), kTidOps, "XLA Ops", 2);
        if (o_.memory_rate > 0) NameThread(DevPid(h, d), kTidMemory, "Memory", 3);
      }
    }
  }

  void Counter(uint32_t pid, int64_t ts, std::string_view name, std::string_view args) {
    Ev e;
    e.ph = 'C';
    e.pid = pid;
    e.has_tid = false;
    e.ts = ts;
    e.name = name;
    e.args = args;
    w_->Emit(e);
  }
  void HbmCounter(uint32_t pid, int64_t ts, uint32_t d) {
    // Random walk around 8..16 GiB.
    int64_t& v = hbm_[d];
    v += static_cast<int64_t>(rng_.Normal() * (64 << 20));
    v = std::clamp<int64_t>(v, int64_t(4) << 30, int64_t(16) << 30);
    Scratch a;
    a.S("{\"in_use\":").U(static_cast<uint64_t>(v)).S("}");
    Counter(pid, ts, "HBM", a.View());
  }

  // A Kineto "[memory]" instant on device `g` (global index): an allocation,
  // or the free of a random live allocation (nothing when none is live).
  void MemoryEvent(uint32_t pid, uint32_t g, int64_t ts, bool alloc) {
    DeviceMemory& m = memory_[g];
    int64_t bytes;
    uint64_t addr;
    if (alloc) {
      bytes = std::clamp<int64_t>(static_cast<int64_t>(rng_.LogNormal(1 << 20, 1.5)), 512, int64_t(1) << 30);
      bytes = (bytes + 511) / 512 * 512;
      if (!m.free_addrs.empty()) {
        addr = m.free_addrs.back();
        m.free_addrs.pop_back();
      } else {
        addr = m.next_addr;
        m.next_addr += uint64_t(1) << 30;  // room for the largest size
      }
      m.live.push_back({addr, bytes});
      m.allocated += bytes;
      m.reserved = std::max(m.reserved, (m.allocated + (2 << 20) - 1) / (2 << 20) * (2 << 20));
    } else {
      if (m.live.empty()) return;
      const size_t k = rng_.Below(m.live.size());
      addr = m.live[k].first;
      bytes = -m.live[k].second;
      m.live[k] = m.live.back();
      m.live.pop_back();
      m.free_addrs.push_back(addr);
      m.allocated += bytes;
    }
    Ev e;
    e.ph = 'i';
    e.scope = 't';
    e.pid = pid;
    e.tid = kTidMemory;
    e.ts = ts;
    e.name = "[memory]";
    e.cat = "cpu_instant_event";
    Scratch a;
    a.S("{\"Device Type\":1,\"Device Id\":").U(g).S(",\"Addr\":").U(addr).S(",\"Bytes\":");
    if (bytes < 0) a.S("-");
    a.U(static_cast<uint64_t>(bytes < 0 ? -bytes : bytes)).S(",\"Total Allocated\":").U(static_cast<uint64_t>(m.allocated));
    a.S(",\"Total Reserved\":").U(static_cast<uint64_t>(m.reserved)).S("}");
    e.args = a.View();
    w_->Emit(e);
  }

  // One XLA op and its nested children, pre-order. Returns events written.
  uint64_t OpTree(uint32_t pid, int64_t start, int64_t dur, int level, int max_level,
                  uint64_t infeed_flow = 0) {
    Ev e;
    e.pid = pid;
    e.tid = kTidOps;
    e.ts = start;
    e.dur = dur;
    Scratch n;
    const auto kind = infeed_flow ? std::string_view("infeed") : kHloKinds[rng_.Below(kNumHloKinds)];
    n.S(kind).S(".").U(rng_.Below(level == 1 ? 4000 : 400));
    e.name = n.View();
    Scratch a;
    const double r = rng_.U01();
    if (r < 0.4) {
      a.S("{\"flops\":").U(static_cast<uint64_t>(rng_.LogNormal(1e6, 2))).S("}");
    } else if (r < 0.6) {
      a.S("{\"bytes\":").U(static_cast<uint64_t>(rng_.LogNormal(65536, 2))).S("}");
    }
    e.args = a.View();
    w_->Emit(e);
    uint64_t written = 1;
    if (infeed_flow) {
      // The host transfer's flow ends here, bound to this (enclosing) op.
      Ev f;
      f.ph = 'f';
      f.pid = pid;
      f.tid = kTidOps;
      f.ts = start;
      f.name = "TransferToDevice";
      f.cat = "flow";
      f.id = infeed_flow;
      f.has_id = true;
      f.bind_enclosing = true;
      w_->Emit(f);
    }
    if (level >= max_level || dur < 8) return written;
    // Children: more likely near the top, partitioning the parent with gaps.
    const double p_child = level == 1 ? 0.55 : 0.75;
    if (!rng_.Chance(p_child)) return written;
    const int k = 1 + static_cast<int>(rng_.Below(3));
    double w[2 * 3 + 1];
    double total = 0;
    for (int i = 0; i < 2 * k + 1; ++i) {
      w[i] = rng_.Exp() * ((i & 1) ? 1.0 : 0.25);  // odd = child, even = gap
      total += w[i];
    }
    double cum = 0;
    for (int i = 0; i < 2 * k + 1; ++i) {
      const int64_t s = start + static_cast<int64_t>(dur * (cum / total));
      cum += w[i];
      int64_t en = start + static_cast<int64_t>(dur * (cum / total));
      if (en > start + dur) en = start + dur;
      if (i & 1) written += OpTree(pid, s, en - s, level + 1, max_level);
    }
    return written;
  }

  // One step on one device. Returns the device's end time.
  int64_t DeviceStep(uint32_t h, uint32_t d, uint32_t step, int64_t step_start,
                     double scale, std::vector<FlowRec>* flows) {
    const uint32_t pid = DevPid(h, d);
    const uint64_t budget =
        std::max<uint64_t>(1, static_cast<uint64_t>(o_.ops_per_step * scale));
    const uint32_t nmod = 1 + (step % 3 == 0 ? 2 : rng_.Below(2));
    int64_t t = step_start + static_cast<int64_t>(rng_.LogNormal(30'000, 0.7));
    HbmCounter(pid, t, d);
    for (uint32_t m = 0; m < nmod; ++m) {
      const uint64_t mod_budget = std::max<uint64_t>(1, budget / nmod);
      const int64_t mod_start = t;
      const uint64_t fid = next_flow_++;
      flows->push_back({mod_start, fid, d, true});
      // Flow end binds to the enclosing module slice; written after the
      // module X (same ts) below.
      int64_t ot = mod_start + static_cast<int64_t>(rng_.LogNormal(500, 0.5));
      uint64_t n = 0;
      uint64_t top = 0;
      while (n < mod_budget) {
        int64_t dur;
        if (rng_.Chance(0.01)) {
          dur = 0;
        } else {
          dur = static_cast<int64_t>(rng_.LogNormal(4000, 1.9));
          dur = std::clamp<int64_t>(dur, 1, 20'000'000);
        }
        const int max_level = 3 + static_cast<int>(rng_.Below(4));
        // Infeed ops (with a host transfer flowing into them) are spaced so
        // that the host's B/E transfers never overlap on their thread.
        uint64_t infeed_flow = 0;
        if (ot - last_infeed_[d] > 25'000 && rng_.Chance(0.05)) {
          infeed_flow = next_flow_++;
          flows->push_back({ot, infeed_flow, d, false});
          last_infeed_[d] = ot;
        }
        if (o_.memory_rate > 0 && rng_.Chance(o_.memory_rate)) MemoryEvent(pid, h * o_.devices + d, ot, true);
        n += OpTree(pid, ot, dur, 1, max_level, infeed_flow);
        // Frees slightly rarer than allocations: the live set grows slowly.
        if (o_.memory_rate > 0 && rng_.Chance(o_.memory_rate * 0.99)) {
          MemoryEvent(pid, h * o_.devices + d, ot + dur, false);
        }
        if (++top % 48 == 0) HbmCounter(pid, ot + dur, d);
        ot += dur + static_cast<int64_t>(rng_.LogNormal(250, 1.0));
      }
      const int64_t mod_end = ot;
      Ev e;
      e.pid = pid;
      e.tid = kTidModules;
      e.ts = mod_start;
      e.dur = mod_end - mod_start;
      Scratch nm;
      const auto mod = kModules[(step + m) % 4];
      nm.S(mod).S("(").U(1000 + (step + m) % 4 * 17).S(")");
      e.name = nm.View();
      Scratch a;
      a.S("{\"run_id\":").U(rng_.Below(1u << 30)).S(",\"program_id\":").U(1000 + (step + m) % 4 * 17).S("}");
      e.args = a.View();
      w_->Emit(e);
      Ev f;
      f.ph = 'f';
      f.pid = pid;
      f.tid = kTidModules;
      f.ts = mod_start;
      f.name = "LaunchXlaModule";
      f.cat = "flow";
      f.id = fid;
      f.has_id = true;
      f.bind_enclosing = true;
      w_->Emit(f);
      HbmCounter(pid, mod_end, d);
      t = mod_end + static_cast<int64_t>(rng_.LogNormal(4'000, 0.8));
    }
    return t;
  }

  // Nested host X events (framework / pipeline), pre-order.
  uint64_t HostTree(uint32_t pid, uint32_t tid, int64_t start, int64_t dur, int level,
                    int max_level, bool pipeline) {
    Ev e;
    e.pid = pid;
    e.tid = tid;
    e.ts = start;
    e.dur = dur;
    if (pipeline) {
      e.name = kPipelineOps[std::min<size_t>(level - 1 + rng_.Below(3), 5)];
    } else {
      e.name = kFrameworkOps[rng_.Below(12)];
    }
    e.cat = pipeline ? "tf_data" : "python";
    Scratch a;
    if (pipeline) {
      a.S("{\"element_id\":").U(elem_++).S("}");
    } else if (rng_.Chance(0.3)) {
      a.S("{\"line\":").U(10 + rng_.Below(900)).S("}");
    }
    e.args = a.View();
    w_->Emit(e);
    uint64_t n = 1;
    if (level >= max_level || dur < 100) return n;
    const int k = 1 + static_cast<int>(rng_.Below(2));
    int64_t s = start + dur / 16;
    const int64_t child = dur * 3 / (4 * k) ;
    for (int i = 0; i < k; ++i) {
      n += HostTree(pid, tid, s, child, level + 1, max_level, pipeline);
      s += child + dur / 16;
    }
    return n;
  }

  void HostStep(uint32_t h, uint32_t step, int64_t step_start, int64_t step_end,
                double scale, const std::vector<std::vector<FlowRec>>& flows) {
    const uint32_t pid = HostPid(h);
    const int64_t len = std::max<int64_t>(step_end - step_start, 1000);
    // python thread: TrainStep with framework ops, instants.
    {
      Ev e;
      e.pid = pid;
      e.tid = kTidPython;
      e.ts = step_start;
      e.dur = len;
      e.name = "TrainStep";
      e.cat = "python";
      Scratch a;
      a.S("{\"step_num\":").U(step).S("}");
      e.args = a.View();
      w_->Emit(e);
      Ev in;
      in.ph = 'i';
      in.pid = pid;
      in.tid = kTidPython;
      in.ts = step_start;
      in.name = "StepMarker";
      in.scope = (step % 50 == 0 && h == 0) ? 'g' : 'p';
      w_->Emit(in);
      const uint64_t nfw = static_cast<uint64_t>(o_.ops_per_step * o_.devices * 0.05 * scale);
      // Top-level framework ops partition the step.
      uint64_t written = 0;
      const uint64_t tops = std::max<uint64_t>(1, nfw / 4);
      const int64_t slot = len / static_cast<int64_t>(tops + 1);
      int64_t t = step_start + slot / 4;
      for (uint64_t i = 0; i < tops && written < nfw; ++i) {
        const int64_t dur = std::max<int64_t>(1, static_cast<int64_t>(slot * (0.2 + 0.6 * rng_.U01())));
        written += HostTree(pid, kTidPython, t, dur, 1, 2 + static_cast<int>(rng_.Below(2)), false);
        if (rng_.Chance(0.05)) {
          Ev gc;
          gc.ph = 'i';
          gc.pid = pid;
          gc.tid = kTidPython;
          gc.ts = t + dur;
          gc.name = "GC";
          gc.scope = 't';
          Scratch a2;
          a2.S("{\"gen\":").U(rng_.Below(3)).S("}");
          gc.args = a2.View();
          w_->Emit(gc);
        }
        t += slot;
      }
    }
    // Input pipeline threads.
    for (uint32_t th = 0; th < kNumDataThreads; ++th) {
      const uint64_t n = static_cast<uint64_t>(o_.ops_per_step * o_.devices * 0.04 * scale);
      const uint64_t tops = std::max<uint64_t>(1, n / 3);
      const int64_t slot = len / static_cast<int64_t>(tops + 1);
      int64_t t = step_start + slot / 3;
      for (uint64_t i = 0; i < tops; ++i) {
        const int64_t dur = std::max<int64_t>(1, static_cast<int64_t>(slot * (0.3 + 0.6 * rng_.U01())));
        HostTree(pid, kTidDataBase + th, t, dur, 1, 3, true);
        t += slot;
      }
    }
    // Launchers and transfers, per device.
    for (uint32_t d = 0; d < o_.devices; ++d) {
      int64_t last_launch_end = INT64_MIN;
      for (const FlowRec& f : flows[d]) {
        if (f.module) {
          const int64_t lat = std::clamp<int64_t>(static_cast<int64_t>(rng_.LogNormal(15'000, 0.8)), 2'000, 200'000);
          int64_t s = std::max(f.dev_ts - lat, last_launch_end + 100);
          const int64_t dur = std::clamp<int64_t>(static_cast<int64_t>(rng_.LogNormal(6'000, 0.5)), 500, lat);
          Ev e;
          e.pid = pid;
          e.tid = kTidLaunchBase + d;
          e.ts = s;
          e.dur = dur;
          e.name = "LaunchXlaModule";
          e.cat = "runtime";
          Scratch a;
          a.S("{\"device\":").U(h * o_.devices + d).S("}");
          e.args = a.View();
          w_->Emit(e);
          Ev fs;
          fs.ph = 's';
          fs.pid = pid;
          fs.tid = kTidLaunchBase + d;
          fs.ts = s + dur / 2;
          fs.name = "LaunchXlaModule";
          fs.cat = "flow";
          fs.id = f.id;
          fs.has_id = true;
          w_->Emit(fs);
          last_launch_end = s + dur;
        } else {
          // B/E transfer that ends shortly before the infeed op; never
          // overlapping the previous one on this thread.
          const int64_t end = f.dev_ts - 200;
          int64_t dur = std::clamp<int64_t>(static_cast<int64_t>(rng_.LogNormal(3'000, 0.7)), 200, 20'000);
          int64_t s = end - dur;
          Ev b;
          b.ph = 'B';
          b.pid = pid;
          b.tid = kTidXferBase + d;
          b.ts = s;
          b.name = "TransferToDevice";
          b.cat = "runtime";
          Scratch a;
          a.S("{\"bytes\":").U(static_cast<uint64_t>(rng_.LogNormal(1 << 20, 1))).S("}");
          b.args = a.View();
          w_->Emit(b);
          Ev fs;
          fs.ph = 's';
          fs.pid = pid;
          fs.tid = kTidXferBase + d;
          fs.ts = s + 1;
          fs.name = "TransferToDevice";
          fs.cat = "flow";
          fs.id = f.id;
          fs.has_id = true;
          w_->Emit(fs);
          Ev en;
          en.ph = 'E';
          en.pid = pid;
          en.tid = kTidXferBase + d;
          en.ts = end;
          w_->Emit(en);

        }
      }
    }
    // Host counters.
    {
      const int samples = std::max(1, static_cast<int>(40 * scale));
      for (int i = 0; i < samples; ++i) {
        const int64_t ts = step_start + len * i / samples;
        host_mem_ += static_cast<int64_t>(rng_.Normal() * (32 << 20));
        host_mem_ = std::clamp<int64_t>(host_mem_, int64_t(2) << 30, int64_t(64) << 30);
        host_peak_ = std::max(host_peak_, host_mem_);
        Scratch a;
        a.S("{\"in_use\":").U(static_cast<uint64_t>(host_mem_)).S(",\"peak\":").U(static_cast<uint64_t>(host_peak_)).S("}");
        Counter(pid, ts, "Memory", a.View());
        if (i % 2 == 0) {
          a.Clear();
          a.S("{\"depth\":").U(rng_.Below(17)).S("}");
          Counter(pid, ts + 1, "Infeed queue", a.View());
        }
      }
    }
  }

  const Options& o_;
  Writer* w_;
  Rng rng_;
  Scratch name_, args_;
  uint64_t next_flow_ = 1;
  uint64_t elem_ = 0;
  uint32_t steps_ = 0;
  std::vector<int64_t> last_infeed_ = std::vector<int64_t>(64, INT64_MIN / 2);
  std::vector<int64_t> hbm_ = std::vector<int64_t>(1024, int64_t(8) << 30);
  struct DeviceMemory {
    std::vector<std::pair<uint64_t, int64_t>> live;  // (addr, bytes)
    std::vector<uint64_t> free_addrs;
    uint64_t next_addr = uint64_t(0x7f0000000000);
    int64_t allocated = 0, reserved = 0;
  };
  std::vector<DeviceMemory> memory_ = std::vector<DeviceMemory>(1024);
  int64_t host_mem_ = int64_t(16) << 30;
  int64_t host_peak_ = int64_t(16) << 30;
};

}  // namespace

int main(int argc, char** argv) {
  namespace po = boost::program_options;
  Options o;
  po::options_description desc(
      "tt_gen_trace: deterministic synthetic pod-scale ML profile as Chrome "
      "Trace Event JSON\nOptions");
  desc.add_options()
      ("help,h", "show this help")
      ("events,n", po::value<uint64_t>(&o.events)->default_value(o.events),
       "target total number of events (M events included; met within one step)")
      ("hosts", po::value<uint32_t>(&o.hosts)->default_value(o.hosts), "number of hosts")
      ("devices", po::value<uint32_t>(&o.devices)->default_value(o.devices), "TPU devices per host")
      ("seed", po::value<uint64_t>(&o.seed)->default_value(o.seed), "PRNG seed")
      ("ops-per-step", po::value<uint32_t>(&o.ops_per_step)->default_value(o.ops_per_step),
       "XLA op events per device per step (density)")
      ("base-us", po::value<int64_t>(&o.base_us)->default_value(o.base_us),
       "timestamp of the trace start in microseconds (e.g. 1700000000000000 for epoch-scale)")
      ("gzip-level", po::value<int>(&o.gzip_level)->default_value(o.gzip_level),
       "zlib level for .gz output")
      ("output,o", po::value<std::string>(&o.out), "output path; .gz suffix = gzip")
      ("csv", po::value<std::string>(&o.csv), "also write a CSV of the events (SQLite baseline)")
      ("meta", po::value<std::string>(&o.meta), "also write a JSON summary of the trace")
      ("memory-rate", po::value<double>(&o.memory_rate)->default_value(0),
       "probability of a Kineto [memory] allocation before (and a free after) each top-level XLA op");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tt_gen_trace: %s\n", e.what());
    return 2;
  }
  if (vm.count("help")) {
    std::cout << desc << "\n";
    return 0;
  }
  if (o.out.empty()) {
    std::fprintf(stderr, "tt_gen_trace: -o PATH is required (see --help)\n");
    return 2;
  }
  if (o.hosts < 1 || o.devices < 1 || o.devices > 64 || o.hosts * o.devices > 1024) {
    std::fprintf(stderr, "tt_gen_trace: need 1 <= hosts, 1 <= devices <= 64, hosts*devices <= 1024\n");
    return 2;
  }
  const auto t0 = std::chrono::steady_clock::now();
  Sink json, csv;
  if (!json.Open(o.out, o.gzip_level)) {
    std::fprintf(stderr, "tt_gen_trace: cannot open %s\n", o.out.c_str());
    return 1;
  }
  if (!o.csv.empty() && !csv.Open(o.csv, o.gzip_level)) {
    std::fprintf(stderr, "tt_gen_trace: cannot open %s\n", o.csv.c_str());
    return 1;
  }
  Writer w(&json, o.csv.empty() ? nullptr : &csv);
  Generator g(o, &w);
  g.Run();
  bool ok = json.Close();
  if (!o.csv.empty()) ok = csv.Close() && ok;
  if (!ok) {
    std::fprintf(stderr, "tt_gen_trace: write failed\n");
    return 1;
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const Counts& c = w.counts;
  char summary[2048];
  std::snprintf(
      summary, sizeof summary,
      "{\"events\":%llu,\"json_bytes\":%llu,\"bytes_per_event\":%.1f,"
      "\"start_us\":%.3f,\"end_us\":%.3f,\"span_us\":%.3f,\"steps\":%u,"
      "\"hosts\":%u,\"devices_per_host\":%u,\"seed\":%llu,\"ops_per_step\":%u,"
      "\"max_dur_us\":%.3f,"
      "\"counts\":{\"M\":%llu,\"X\":%llu,\"B\":%llu,\"E\":%llu,\"i\":%llu,\"C\":%llu,\"s\":%llu,\"f\":%llu},"
      "\"one_track\":{\"pid\":%u,\"tid\":%u,\"name\":\"tpu-host-0000 /device:TPU:0 / XLA Ops\"},"
      "\"seconds\":%.3f,\"events_per_s\":%.0f}\n",
      (unsigned long long)c.total, (unsigned long long)json.raw_bytes(),
      c.total ? double(json.raw_bytes()) / c.total : 0.0, w.min_ts / 1000.0, w.max_end / 1000.0,
      (w.max_end - w.min_ts) / 1000.0, g.steps(), o.hosts, o.devices,
      (unsigned long long)o.seed, o.ops_per_step, w.max_dur / 1000.0,
      (unsigned long long)c.meta, (unsigned long long)c.x, (unsigned long long)c.b,
      (unsigned long long)c.e, (unsigned long long)c.i, (unsigned long long)c.c,
      (unsigned long long)c.s, (unsigned long long)c.f, 2u, kTidOps, secs,
      secs > 0 ? c.total / secs : 0.0);
  std::fputs(summary, stderr);
  if (!o.meta.empty()) {
    FILE* m = std::fopen(o.meta.c_str(), "wb");
    if (!m || std::fputs(summary, m) < 0 || std::fclose(m) != 0) {
      std::fprintf(stderr, "tt_gen_trace: cannot write %s\n", o.meta.c_str());
      return 1;
    }
  }
  return 0;
}
