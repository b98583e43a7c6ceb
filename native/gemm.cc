// Single-precision matrix products for the query embedder (ADR 0007): the USE-lite model's
// activation-by-weight products and its per-sequence attention, on AVX2 + FMA, called by the
// forward pass in api/providers/use-lite-runtime.cjs with views of its Float32Arrays. Plain
// C++ and N-API; built at install by node-gyp where a compiler is present, and used only
// where the CPU has AVX2 and FMA (supported()).
#include <node_api.h>
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace {

constexpr int NR = 16;  // columns of a packed panel: two 8-wide registers
constexpr int MR = 6;   // rows of A a micro-kernel keeps in registers (12 accumulators)

// B [K x N] row-major → panels of NR columns, each K x NR contiguous; missing columns are 0.
void PackB(const float* b, int k, int n, float* out) {
  const int panels = (n + NR - 1) / NR;
  for (int p = 0; p < panels; p++) {
    float* dst = out + static_cast<size_t>(p) * k * NR;
    const int n0 = p * NR;
    const int w = std::min(NR, n - n0);
    for (int i = 0; i < k; i++) {
      const float* src = b + static_cast<size_t>(i) * n + n0;
      int j = 0;
      for (; j < w; j++) dst[i * NR + j] = src[j];
      for (; j < NR; j++) dst[i * NR + j] = 0.0f;
    }
  }
}

// C[6 x 16] = A[6 x k] · panel[k x 16], accumulators in named registers (an array of them
// is kept in memory by GCC, at half the speed). `w` columns of C are written.
__attribute__((target("avx2,fma"))) void MicroKernel6x16(const float* a, int lda, const float* panel, int k, float* c, int ldc,
                                                         int rows, int w) {
  __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
  __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  const size_t ld = static_cast<size_t>(lda);
  for (int i = 0; i < k; i++) {
    const __m256 b0 = _mm256_loadu_ps(panel + i * NR);
    const __m256 b1 = _mm256_loadu_ps(panel + i * NR + 8);
    // Row r of A times the panel's row i, into row r's two accumulators.
#define POLYPHONY_ROW(r)                                          \
  {                                                               \
    const __m256 x = _mm256_broadcast_ss(a + (r) * ld + i);       \
    c##r##0 = _mm256_fmadd_ps(x, b0, c##r##0);                    \
    c##r##1 = _mm256_fmadd_ps(x, b1, c##r##1);                    \
  }
    POLYPHONY_ROW(0) POLYPHONY_ROW(1) POLYPHONY_ROW(2) POLYPHONY_ROW(3) POLYPHONY_ROW(4) POLYPHONY_ROW(5)
#undef POLYPHONY_ROW
  }
  alignas(32) float out[MR][NR];
#define POLYPHONY_STORE(r)                   \
  _mm256_store_ps(out[r], c##r##0);          \
  _mm256_store_ps(out[r] + 8, c##r##1);
  POLYPHONY_STORE(0) POLYPHONY_STORE(1) POLYPHONY_STORE(2) POLYPHONY_STORE(3) POLYPHONY_STORE(4) POLYPHONY_STORE(5)
#undef POLYPHONY_STORE
  for (int r = 0; r < rows; r++) std::memcpy(c + static_cast<size_t>(r) * ldc, out[r], sizeof(float) * w);
}

// C [M x N] = A [M x K] · B, B packed by PackB; panels [p0, p1). Rows past the last full
// block of 6 go through a zero-padded copy of A's last rows.
void GemmPanels(const float* a, const float* packed, float* c, int m, int k, int n, int p0, int p1) {
  const int full = m - m % MR;
  thread_local std::vector<float> tail;
  if (full < m) {
    tail.assign(static_cast<size_t>(MR) * k, 0.0f);
    std::memcpy(tail.data(), a + static_cast<size_t>(full) * k, sizeof(float) * (m - full) * k);
  }
  for (int p = p0; p < p1; p++) {
    const float* panel = packed + static_cast<size_t>(p) * k * NR;
    const int n0 = p * NR;
    const int w = std::min(NR, n - n0);
    for (int i = 0; i < full; i += MR) MicroKernel6x16(a + static_cast<size_t>(i) * k, k, panel, k, c + static_cast<size_t>(i) * n + n0, n, MR, w);
    if (full < m) MicroKernel6x16(tail.data(), k, panel, k, c + static_cast<size_t>(full) * n + n0, n, m - full, w);
  }
}

// One helper thread that takes the second half of the panels; the caller does the first.
// Between the products of one embedding (a fraction of a millisecond apart) the helper spins,
// so it starts at once; after kSpin without work it sleeps on a condition variable. One per
// JavaScript thread (N-API instance data): two embedding workers never share one, and a
// worker that exits stops and joins its helper.
class Helper {
 public:
  ~Helper() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    posted_.fetch_add(1);
    cv_.notify_one();
    thread_.join();
  }

  void Run(const float* a, const float* packed, float* c, int m, int k, int n, int p0, int p1) {
    if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
    job_ = Job{a, packed, c, m, k, n, p0, p1};
    posted_.fetch_add(1);  // seq_cst, paired with sleeping_ below (no lost wake-up)
    if (sleeping_.load()) {
      std::lock_guard<std::mutex> lock(mu_);
      cv_.notify_one();
    }
  }
  void Wait() {
    const uint64_t target = posted_.load();
    // The helper's share is as long as the caller's: spin, then let the core go now and then
    // (the helper may be waiting for this very core).
    for (int i = 0; finished_.load(std::memory_order_acquire) != target; i++) {
      if (i < 4096) {
        _mm_pause();
      } else {
        std::this_thread::yield();
      }
    }
  }

 private:
  static constexpr auto kSpin = std::chrono::microseconds(300);
  struct Job {
    const float* a;
    const float* packed;
    float* c;
    int m, k, n, p0, p1;
  };
  void Loop() {
    uint64_t seen = 0;
    for (;;) {
      auto idle_since = std::chrono::steady_clock::now();
      for (int i = 0; posted_.load(std::memory_order_acquire) == seen; i++) {
        _mm_pause();
        if ((i & 255) == 255 && std::chrono::steady_clock::now() - idle_since > kSpin) {
          std::unique_lock<std::mutex> lock(mu_);
          sleeping_.store(true);  // seq_cst, paired with posted_ in Run
          cv_.wait(lock, [&] { return posted_.load() != seen; });
          sleeping_.store(false);
        }
      }
      seen = posted_.load(std::memory_order_acquire);
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (stop_) return;
      }
      const Job job = job_;
      GemmPanels(job.a, job.packed, job.c, job.m, job.k, job.n, job.p0, job.p1);
      finished_.store(seen, std::memory_order_release);
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
  Job job_{};
  std::atomic<uint64_t> posted_{0};
  std::atomic<uint64_t> finished_{0};
  std::atomic<bool> sleeping_{false};
  bool stop_ = false;  // guarded by mu_
};

// Σ a[x]·b[x], eight lanes at a time.
__attribute__((target("avx2,fma"))) float Dot(const float* a, const float* b, int n) {
  __m256 acc = _mm256_setzero_ps();
  int x = 0;
  for (; x + 8 <= n; x += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(a + x), _mm256_loadu_ps(b + x), acc);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, acc);
  float sum = ((lanes[0] + lanes[4]) + (lanes[1] + lanes[5])) + ((lanes[2] + lanes[6]) + (lanes[3] + lanes[7]));
  for (; x < n; x++) sum += a[x] * b[x];
  return sum;
}

// y += w·x.
__attribute__((target("avx2,fma"))) void Axpy(float w, const float* x, float* y, int n) {
  const __m256 wv = _mm256_set1_ps(w);
  int j = 0;
  for (; j + 8 <= n; j += 8) _mm256_storeu_ps(y + j, _mm256_fmadd_ps(wv, _mm256_loadu_ps(x + j), _mm256_loadu_ps(y + j)));
  for (; j < n; j++) y[j] += w * x[j];
}

// Self-attention of one sequence, every head: qkv is [t x 3d] (queries | keys | values, head
// h at columns h*hd of each), out is [t x d]. Queries are scaled before the products, as the
// model does; every token sees every token of its own sequence (no padding here).
__attribute__((target("avx2,fma"))) void Attention(const float* qkv, int t, int heads, int hd, float scale, float* out) {
  const int d = heads * hd;
  const int stride = 3 * d;
  std::vector<float> q(hd), scores(t);
  for (int h = 0; h < heads; h++) {
    for (int i = 0; i < t; i++) {
      const float* qi = qkv + static_cast<size_t>(i) * stride + h * hd;
      for (int x = 0; x < hd; x++) q[x] = qi[x] * scale;
      float best = -INFINITY;
      for (int j = 0; j < t; j++) {
        const float* kj = qkv + static_cast<size_t>(j) * stride + d + h * hd;
        const float sum = Dot(q.data(), kj, hd);
        scores[j] = sum;
        best = std::max(best, sum);
      }
      float total = 0.0f;
      for (int j = 0; j < t; j++) {
        scores[j] = std::exp(scores[j] - best);
        total += scores[j];
      }
      float* oi = out + static_cast<size_t>(i) * d + h * hd;
      for (int x = 0; x < hd; x++) oi[x] = 0.0f;
      for (int j = 0; j < t; j++) {
        Axpy(scores[j] / total, qkv + static_cast<size_t>(j) * stride + 2 * d + h * hd, oi, hd);
      }
    }
  }
}

// ---- N-API glue -------------------------------------------------------------------------

napi_value Throw(napi_env env, const char* message) {
  napi_throw_error(env, "POLYPHONY_NATIVE", message);
  return nullptr;
}

bool Int(napi_env env, napi_value v, int64_t* out) { return napi_get_value_int64(env, v, out) == napi_ok; }

// A float view: (ArrayBuffer, byteOffset, element count) checked against the buffer's length.
bool View(napi_env env, napi_value buffer, napi_value offset, int64_t count, float** out) {
  void* data = nullptr;
  size_t length = 0;
  int64_t off = 0;
  if (napi_get_arraybuffer_info(env, buffer, &data, &length) != napi_ok || !Int(env, offset, &off)) return false;
  if (off < 0 || off % 4 != 0 || count < 0 || static_cast<uint64_t>(off) + static_cast<uint64_t>(count) * 4 > length) return false;
  *out = reinterpret_cast<float*>(static_cast<char*>(data) + off);
  return true;
}

napi_value Supported(napi_env env, napi_callback_info) {
  __builtin_cpu_init();
  napi_value result;
  napi_get_boolean(env, __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"), &result);
  return result;
}

// pack(buffer, byteOffset, k, n) → ArrayBuffer of packed panels
napi_value Pack(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  int64_t k, n;
  float* b;
  if (argc < 4 || !Int(env, argv[2], &k) || !Int(env, argv[3], &n) || k <= 0 || n <= 0 || !View(env, argv[0], argv[1], k * n, &b))
    return Throw(env, "pack(buffer, byteOffset, k, n): bad arguments");
  const size_t panels = (n + NR - 1) / NR;
  void* data = nullptr;
  napi_value out;
  if (napi_create_arraybuffer(env, panels * k * NR * sizeof(float), &data, &out) != napi_ok) return Throw(env, "pack: out of memory");
  PackB(b, static_cast<int>(k), static_cast<int>(n), static_cast<float*>(data));
  return out;
}

// gemm(aBuf, aOff, packed, cBuf, cOff, m, k, n, threads)
napi_value Gemm(napi_env env, napi_callback_info info) {
  size_t argc = 9;
  napi_value argv[9];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  int64_t m, k, n, threads;
  if (argc < 9 || !Int(env, argv[5], &m) || !Int(env, argv[6], &k) || !Int(env, argv[7], &n) || !Int(env, argv[8], &threads) || m <= 0 ||
      k <= 0 || n <= 0)
    return Throw(env, "gemm: bad arguments");
  const int64_t panels = (n + NR - 1) / NR;
  float *a, *c;
  void* packed = nullptr;
  size_t packed_length = 0;
  if (!View(env, argv[0], argv[1], m * k, &a) || !View(env, argv[3], argv[4], m * n, &c) ||
      napi_get_arraybuffer_info(env, argv[2], &packed, &packed_length) != napi_ok ||
      packed_length < static_cast<size_t>(panels * k * NR * sizeof(float)))
    return Throw(env, "gemm: a view is out of its buffer");
  const float* bp = static_cast<const float*>(packed);
  if (threads >= 2 && panels >= 2 && m * k * n >= (1 << 18)) {
    void* data = nullptr;
    if (napi_get_instance_data(env, &data) != napi_ok || data == nullptr) return Throw(env, "gemm: no helper thread");
    Helper* helper = static_cast<Helper*>(data);
    const int split = static_cast<int>(panels / 2);
    helper->Run(a, bp, c, static_cast<int>(m), static_cast<int>(k), static_cast<int>(n), split, static_cast<int>(panels));
    GemmPanels(a, bp, c, static_cast<int>(m), static_cast<int>(k), static_cast<int>(n), 0, split);
    helper->Wait();
  } else {
    GemmPanels(a, bp, c, static_cast<int>(m), static_cast<int>(k), static_cast<int>(n), 0, static_cast<int>(panels));
  }
  return nullptr;
}

// attention(qkvBuf, qkvOff, outBuf, outOff, t, heads, headDims, scale)
napi_value AttentionCall(napi_env env, napi_callback_info info) {
  size_t argc = 8;
  napi_value argv[8];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  int64_t t, heads, hd;
  double scale;
  if (argc < 8 || !Int(env, argv[4], &t) || !Int(env, argv[5], &heads) || !Int(env, argv[6], &hd) ||
      napi_get_value_double(env, argv[7], &scale) != napi_ok || t <= 0 || heads <= 0 || hd <= 0)
    return Throw(env, "attention: bad arguments");
  float *qkv, *out;
  if (!View(env, argv[0], argv[1], t * 3 * heads * hd, &qkv) || !View(env, argv[2], argv[3], t * heads * hd, &out))
    return Throw(env, "attention: a view is out of its buffer");
  Attention(qkv, static_cast<int>(t), static_cast<int>(heads), static_cast<int>(hd), static_cast<float>(scale), out);
  return nullptr;
}

napi_value Init(napi_env env, napi_value exports) {
  // This thread's helper (started on first use), deleted (stopped, joined) with the thread's environment.
  napi_set_instance_data(
      env, new Helper(), [](napi_env, void* data, void*) { delete static_cast<Helper*>(data); }, nullptr);
  const napi_property_descriptor props[] = {
      {"supported", nullptr, Supported, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"pack", nullptr, Pack, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"gemm", nullptr, Gemm, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"attention", nullptr, AttentionCall, nullptr, nullptr, nullptr, napi_default, nullptr},
  };
  napi_define_properties(env, exports, sizeof(props) / sizeof(props[0]), props);
  return exports;
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
