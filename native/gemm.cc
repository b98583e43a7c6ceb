// Single-precision matrix products for the embedder (ADR 0007, ADR 0021): the USE-lite model's
// activation-by-weight products and its per-sequence attention, on AVX2 + FMA, and the same
// products on AVX-512 where the CPU has it (wide()), called by the forward pass in
// providers/use-lite-runtime.cjs with views of its Float32Arrays. Both paths sum every output
// in the same order with the same fused multiply-adds, so they give the same numbers bit for
// bit. Plain C++ and N-API; built at install by node-gyp where a compiler is present, and used
// only where the CPU has AVX2 and FMA (supported()).
#include <node_api.h>
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace {

constexpr int NR = 16;  // columns of a packed panel: two 8-wide registers, or one 16-wide
constexpr int MR = 6;   // rows of A the AVX2 micro-kernel keeps in registers (12 accumulators)
constexpr int MR_WIDE = 12;  // rows of A the AVX-512 micro-kernel keeps (24 of its 32 registers)

// What is done to C's values as they leave the registers, in the order the forward pass did it
// in JavaScript (each step a float32 rounding, as there): + bias[column], + residual[row,
// column], then relu. Done here, the values are still in cache; in JavaScript each was a pass
// over the whole output.
struct Epilogue {
  const float* bias = nullptr;      // [n], or none
  const float* residual = nullptr;  // [m x n] like C, or none
  bool relu = false;
};

// Writes `rows` x `w` values of a tile (row stride NR_TILE) to C at (row0, n0), through the epilogue.
template <int NR_TILE>
void StoreTile(const float (*tile)[NR_TILE], int rows, int w, float* c, int ldc, int row0, int n0, const Epilogue& epilogue) {
  for (int r = 0; r < rows; r++) {
    float* out = c + static_cast<size_t>(r) * ldc;
    const float* residual = epilogue.residual ? epilogue.residual + static_cast<size_t>(row0 + r) * ldc + n0 : nullptr;
    for (int j = 0; j < w; j++) {
      float v = tile[r][j];
      if (epilogue.bias) v += epilogue.bias[n0 + j];
      if (residual) v += residual[j];
      if (epilogue.relu) v = v > 0.0f ? v : 0.0f;
      out[j] = v;
    }
  }
}

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
// is kept in memory by GCC, at half the speed). `w` columns of C are written, through the
// epilogue; C's tile starts at (row0, n0) of the whole output.
__attribute__((target("avx2,fma"))) void MicroKernel6x16(const float* a, int lda, const float* panel, int k, float* c, int ldc,
                                                         int rows, int w, int row0, int n0, const Epilogue& epilogue) {
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
  StoreTile<NR>(out, rows, w, c, ldc, row0, n0, epilogue);
}

// The AVX-512 micro-kernel: C[12 x 32] = A[12 x k] · two adjacent panels, one 16-wide register
// per row and panel (24 accumulators; AVX2 has 16 registers in all, AVX-512 32). Each output is
// the same chain of fused multiply-adds over i = 0..k-1 as in MicroKernel6x16, so the same
// float32 number. On CPUs that split a 512-bit operation in two (Zen 4) the gain is not wider
// arithmetic but fewer loads and broadcasts per multiply-add. `panels` is 1 or 2.
__attribute__((target("avx512f"))) void MicroKernel12x32(const float* a, int lda, const float* panel0, const float* panel1, int panels, int k,
                                                         float* c, int ldc, int rows, int w, int row0, int n0, const Epilogue& epilogue) {
  __m512 c00 = _mm512_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00;
  __m512 c40 = c00, c41 = c00, c50 = c00, c51 = c00, c60 = c00, c61 = c00, c70 = c00, c71 = c00;
  __m512 c80 = c00, c81 = c00, c90 = c00, c91 = c00, ca0 = c00, ca1 = c00, cb0 = c00, cb1 = c00;
  const size_t ld = static_cast<size_t>(lda);
#define POLYPHONY_ROW(r, index)                                   \
  {                                                               \
    const __m512 x = _mm512_set1_ps(a[(index) * ld + i]);         \
    c##r##0 = _mm512_fmadd_ps(x, b0, c##r##0);                    \
    if (panels == 2) c##r##1 = _mm512_fmadd_ps(x, b1, c##r##1);   \
  }
  if (panels == 2) {
    for (int i = 0; i < k; i++) {
      const __m512 b0 = _mm512_loadu_ps(panel0 + i * NR);
      const __m512 b1 = _mm512_loadu_ps(panel1 + i * NR);
      POLYPHONY_ROW(0, 0) POLYPHONY_ROW(1, 1) POLYPHONY_ROW(2, 2) POLYPHONY_ROW(3, 3) POLYPHONY_ROW(4, 4) POLYPHONY_ROW(5, 5)
      POLYPHONY_ROW(6, 6) POLYPHONY_ROW(7, 7) POLYPHONY_ROW(8, 8) POLYPHONY_ROW(9, 9) POLYPHONY_ROW(a, 10) POLYPHONY_ROW(b, 11)
    }
  } else {
    const __m512 b1 = _mm512_setzero_ps();
    for (int i = 0; i < k; i++) {
      const __m512 b0 = _mm512_loadu_ps(panel0 + i * NR);
      POLYPHONY_ROW(0, 0) POLYPHONY_ROW(1, 1) POLYPHONY_ROW(2, 2) POLYPHONY_ROW(3, 3) POLYPHONY_ROW(4, 4) POLYPHONY_ROW(5, 5)
      POLYPHONY_ROW(6, 6) POLYPHONY_ROW(7, 7) POLYPHONY_ROW(8, 8) POLYPHONY_ROW(9, 9) POLYPHONY_ROW(a, 10) POLYPHONY_ROW(b, 11)
    }
  }
#undef POLYPHONY_ROW
  alignas(64) float out[MR_WIDE][2 * NR];
#define POLYPHONY_STORE(r, index)                 \
  _mm512_store_ps(out[index], c##r##0);           \
  _mm512_store_ps(out[index] + NR, c##r##1);
  POLYPHONY_STORE(0, 0) POLYPHONY_STORE(1, 1) POLYPHONY_STORE(2, 2) POLYPHONY_STORE(3, 3) POLYPHONY_STORE(4, 4) POLYPHONY_STORE(5, 5)
  POLYPHONY_STORE(6, 6) POLYPHONY_STORE(7, 7) POLYPHONY_STORE(8, 8) POLYPHONY_STORE(9, 9) POLYPHONY_STORE(a, 10) POLYPHONY_STORE(b, 11)
#undef POLYPHONY_STORE
  StoreTile<2 * NR>(out, rows, w, c, ldc, row0, n0, epilogue);
}

// C [M x N] = A [M x K] · B, B packed by PackB; panels [p0, p1), through the epilogue, on
// AVX-512 when `wide`. Rows past the last full block go through a zero-padded copy of A's
// last rows.
void GemmPanels(const float* a, const float* packed, float* c, int m, int k, int n, int p0, int p1, const Epilogue& epilogue, bool wide) {
  const int rows_per_block = wide ? MR_WIDE : MR;
  const int full = m - m % rows_per_block;
  thread_local std::vector<float> tail;
  if (full < m) {
    tail.assign(static_cast<size_t>(rows_per_block) * k, 0.0f);
    std::memcpy(tail.data(), a + static_cast<size_t>(full) * k, sizeof(float) * (m - full) * k);
  }
  const auto panel_at = [&](int p) { return packed + static_cast<size_t>(p) * k * NR; };
  if (wide) {
    for (int p = p0; p < p1; p += 2) {
      const int panels = std::min(2, p1 - p);
      const int n0 = p * NR;
      const int w = std::min(panels * NR, n - n0);
      const float* second = panels == 2 ? panel_at(p + 1) : panel_at(p);
      for (int i = 0; i < full; i += MR_WIDE)
        MicroKernel12x32(a + static_cast<size_t>(i) * k, k, panel_at(p), second, panels, k, c + static_cast<size_t>(i) * n + n0, n, MR_WIDE, w, i, n0,
                         epilogue);
      if (full < m)
        MicroKernel12x32(tail.data(), k, panel_at(p), second, panels, k, c + static_cast<size_t>(full) * n + n0, n, m - full, w, full, n0, epilogue);
    }
    return;
  }
  for (int p = p0; p < p1; p++) {
    const float* panel = panel_at(p);
    const int n0 = p * NR;
    const int w = std::min(NR, n - n0);
    for (int i = 0; i < full; i += MR)
      MicroKernel6x16(a + static_cast<size_t>(i) * k, k, panel, k, c + static_cast<size_t>(i) * n + n0, n, MR, w, i, n0, epilogue);
    if (full < m) MicroKernel6x16(tail.data(), k, panel, k, c + static_cast<size_t>(full) * n + n0, n, m - full, w, full, n0, epilogue);
  }
}

// ---- int8 products (AVX-512 VNNI), ADR 0021 ------------------------------------------------
// A weight is quantised once, per output column, in two int8 planes: q1 = round(w / sw) (127
// steps each side of 0) and q2 = round(254 · (w / sw − q1)), what q1 missed, so that
// w ≈ sw·(q1 + q2/254), about 15 bits. (With q1 alone, the weights' rounding was most of the
// vectors' difference from float32, and ArguAna's nDCG@10 moved by 0.0027.) An activation is
// quantised per row as the product runs, its own minimum to maximum in 255 steps:
// x ≈ sa·u + min. Then, for each plane,
//   Σ_i x[r,i]·w[i,j] ≈ sw[j]·(sa[r]·Σ_i u[r,i]·q[i,j] + min[r]·Σ_i q[i,j]),
// with the sums of u8 × s8 products exact in int32 (at most 255·127·k); vpdpbusd does 64 of
// them an instruction, four times the multiply-adds a cycle of float32 FMA on Zen 4: two
// planes are still twice float32's rate. Not the float32 vectors: the runtime gives the
// embedder another id (embedding cache).

constexpr float kSecondPlane = 254.0f;

// Packed int8 weight: [scales: float x columns][column sums of q1, then of q2: int32 x
// columns each][q1 panels][q2 panels], each panel (k rounded up to 4) / 4 groups of 16 columns
// x 4 consecutive k (vpdpbusd's layout).
struct Int8Packed {
  const float* scales;
  const int32_t* sums;    // q1's; q2's follow at sums + columns
  const int8_t* panels;   // q1's; q2's follow at panels + plane
  size_t columns;
  size_t plane;           // bytes of one plane's panels
  int k4;                 // k rounded up to a multiple of 4
};

size_t Int8PackedBytes(int k, int n) {
  const size_t panels = (n + NR - 1) / NR;
  const size_t k4 = (k + 3) / 4 * 4;
  return panels * NR * (sizeof(float) + 2 * sizeof(int32_t)) + 2 * panels * k4 * NR;
}

Int8Packed Int8View(const void* data, int k, int n) {
  const size_t columns = static_cast<size_t>((n + NR - 1) / NR) * NR;
  const int k4 = (k + 3) / 4 * 4;
  const char* bytes = static_cast<const char*>(data);
  return Int8Packed{reinterpret_cast<const float*>(bytes),
                    reinterpret_cast<const int32_t*>(bytes + columns * sizeof(float)),
                    reinterpret_cast<const int8_t*>(bytes + columns * (sizeof(float) + 2 * sizeof(int32_t))),
                    columns,
                    columns * k4,
                    k4};
}

void PackInt8(const float* b, int k, int n, void* out) {
  const int k4 = (k + 3) / 4 * 4;
  const Int8Packed view = Int8View(out, k, n);
  float* scales = const_cast<float*>(view.scales);
  int32_t* sums = const_cast<int32_t*>(view.sums);
  int8_t* data = const_cast<int8_t*>(view.panels);
  std::memset(data, 0, 2 * view.plane);
  for (size_t j = 0; j < view.columns; j++) {
    const bool real = j < static_cast<size_t>(n);
    float largest = 0.0f;
    for (int i = 0; real && i < k; i++) largest = std::max(largest, std::fabs(b[static_cast<size_t>(i) * n + j]));
    const float scale = largest > 0.0f ? largest / 127.0f : 1.0f;
    scales[j] = scale;
    int32_t first_sum = 0, second_sum = 0;
    for (int i = 0; real && i < k; i++) {
      const float scaled = b[static_cast<size_t>(i) * n + j] / scale;
      const int first = std::min(127, std::max(-127, static_cast<int>(std::nearbyint(scaled))));
      const int second = std::min(127, std::max(-127, static_cast<int>(std::nearbyint((scaled - first) * kSecondPlane))));
      first_sum += first;
      second_sum += second;
      const size_t at = (j / NR) * k4 * NR + static_cast<size_t>(i / 4) * NR * 4 + (j % NR) * 4 + i % 4;
      data[at] = static_cast<int8_t>(first);
      data[view.plane + at] = static_cast<int8_t>(second);
    }
    sums[j] = first_sum;
    sums[view.columns + j] = second_sum;
  }
}

// Rows of A as u8 (k4 a row, zero padded), with each row's step and minimum; rounding to
// nearest even, as std::nearbyint, sixteen values at a time.
__attribute__((target("avx512f,avx512bw"))) void QuantiseRows(const float* a, int m, int k, int k4, uint8_t* out, float* steps, float* minimums) {
  for (int r = 0; r < m; r++) {
    const float* row = a + static_cast<size_t>(r) * k;
    __m512 lows = _mm512_set1_ps(row[0]), highs = lows;
    int i = 0;
    for (; i + 16 <= k; i += 16) {
      const __m512 x = _mm512_loadu_ps(row + i);
      lows = _mm512_min_ps(lows, x);
      highs = _mm512_max_ps(highs, x);
    }
    float low = _mm512_reduce_min_ps(lows), high = _mm512_reduce_max_ps(highs);
    for (; i < k; i++) {
      low = std::min(low, row[i]);
      high = std::max(high, row[i]);
    }
    const float step = high > low ? (high - low) / 255.0f : 1.0f;
    const float inverse = 1.0f / step;
    uint8_t* dst = out + static_cast<size_t>(r) * k4;
    const __m512 low_v = _mm512_set1_ps(low), inverse_v = _mm512_set1_ps(inverse), zero = _mm512_setzero_ps(), top = _mm512_set1_ps(255.0f);
    for (i = 0; i + 16 <= k; i += 16) {
      const __m512 scaled = _mm512_min_ps(top, _mm512_max_ps(zero, _mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(row + i), low_v), inverse_v)));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm512_cvtusepi32_epi8(_mm512_cvtps_epi32(scaled)));
    }
    for (; i < k; i++) dst[i] = static_cast<uint8_t>(std::min(255.0f, std::max(0.0f, std::nearbyint((row[i] - low) * inverse))));
    for (; i < k4; i++) dst[i] = 0;
    steps[r] = step;
    minimums[r] = low;
  }
}

// Σ_i u[r,i]·q[i,j] for 12 rows and two adjacent panels of one plane (`panels` 1 or 2), into
// sums[row][column]. Named accumulators, as in the float kernels.
__attribute__((target("avx512f,avx512vnni"))) void PlaneSums(const uint8_t* a, int k4, const int8_t* panel0, int panels,
                                                               int32_t (*sums)[2 * NR]) {
  __m512i c00 = _mm512_setzero_si512(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00;
  __m512i c40 = c00, c41 = c00, c50 = c00, c51 = c00, c60 = c00, c61 = c00, c70 = c00, c71 = c00;
  __m512i c80 = c00, c81 = c00, c90 = c00, c91 = c00, ca0 = c00, ca1 = c00, cb0 = c00, cb1 = c00;
  const int8_t* panel1 = panels == 2 ? panel0 + static_cast<size_t>(k4) * NR : panel0;
  const size_t ld = static_cast<size_t>(k4);
  for (int g = 0; g < k4; g += 4) {
    const __m512i b0 = _mm512_loadu_si512(panel0 + g * NR);
    const __m512i b1 = _mm512_loadu_si512(panel1 + g * NR);
#define POLYPHONY_ROW(r, index)                                          \
  {                                                                      \
    int32_t four;                                                        \
    std::memcpy(&four, a + (index) * ld + g, sizeof(four));              \
    const __m512i x = _mm512_set1_epi32(four);                           \
    c##r##0 = _mm512_dpbusd_epi32(c##r##0, x, b0);                       \
    c##r##1 = _mm512_dpbusd_epi32(c##r##1, x, b1);                       \
  }
    POLYPHONY_ROW(0, 0) POLYPHONY_ROW(1, 1) POLYPHONY_ROW(2, 2) POLYPHONY_ROW(3, 3) POLYPHONY_ROW(4, 4) POLYPHONY_ROW(5, 5)
    POLYPHONY_ROW(6, 6) POLYPHONY_ROW(7, 7) POLYPHONY_ROW(8, 8) POLYPHONY_ROW(9, 9) POLYPHONY_ROW(a, 10) POLYPHONY_ROW(b, 11)
#undef POLYPHONY_ROW
  }
#define POLYPHONY_STORE(r, index)                                                     \
  _mm512_store_si512(reinterpret_cast<__m512i*>(sums[index]), c##r##0);              \
  _mm512_store_si512(reinterpret_cast<__m512i*>(sums[index] + NR), c##r##1);
  POLYPHONY_STORE(0, 0) POLYPHONY_STORE(1, 1) POLYPHONY_STORE(2, 2) POLYPHONY_STORE(3, 3) POLYPHONY_STORE(4, 4) POLYPHONY_STORE(5, 5)
  POLYPHONY_STORE(6, 6) POLYPHONY_STORE(7, 7) POLYPHONY_STORE(8, 8) POLYPHONY_STORE(9, 9) POLYPHONY_STORE(a, 10) POLYPHONY_STORE(b, 11)
#undef POLYPHONY_STORE
}

// C[12 x 32] from 12 quantised rows and two adjacent int8 panels (`panels` 1 or 2) of both
// planes, through the dequantisation and then the epilogue.
__attribute__((target("avx512f,avx512vnni"))) void MicroKernelInt8(const uint8_t* a, int k4, const Int8Packed& b, int p, int panels, float* c,
                                                                     int ldc, int rows, int w, int row0, const float* steps, const float* minimums,
                                                                     const Epilogue& epilogue) {
  alignas(64) int32_t first[MR_WIDE][2 * NR];
  alignas(64) int32_t second[MR_WIDE][2 * NR];
  const int8_t* panel = b.panels + static_cast<size_t>(p) * k4 * NR;
  PlaneSums(a, k4, panel, panels, first);
  PlaneSums(a, k4, panel + b.plane, panels, second);
  alignas(64) float out[MR_WIDE][2 * NR];
  const int n0 = p * NR;
  const int n1 = panels == 2 ? n0 + NR : n0;  // the last panel alone: its scales stand in for the missing second's
  const __m512 fraction = _mm512_set1_ps(1.0f / kSecondPlane);
  // Σ_i q[i,j] of both planes, as one number: sum1 + sum2 / 254 (no lambda: it would not
  // inherit this function's target)
  const __m512 scale0 = _mm512_loadu_ps(b.scales + n0), scale1 = _mm512_loadu_ps(b.scales + n1);
  const __m512 sum0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_loadu_si512(b.sums + b.columns + n0)), fraction,
                                      _mm512_cvtepi32_ps(_mm512_loadu_si512(b.sums + n0)));
  const __m512 sum1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_loadu_si512(b.sums + b.columns + n1)), fraction,
                                      _mm512_cvtepi32_ps(_mm512_loadu_si512(b.sums + n1)));
  for (int r = 0; r < rows; r++) {
    const __m512 step = _mm512_set1_ps(steps[row0 + r]), low = _mm512_set1_ps(minimums[row0 + r]);
    for (int half = 0; half < 2; half++) {
      const __m512 product = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_load_si512(reinterpret_cast<const __m512i*>(second[r] + half * NR))), fraction,
                                             _mm512_cvtepi32_ps(_mm512_load_si512(reinterpret_cast<const __m512i*>(first[r] + half * NR))));
      const __m512 scale = half == 0 ? scale0 : scale1;
      const __m512 sums = half == 0 ? sum0 : sum1;
      _mm512_store_ps(out[r] + half * NR, _mm512_mul_ps(scale, _mm512_fmadd_ps(step, product, _mm512_mul_ps(low, sums))));
    }
  }
  StoreTile<2 * NR>(out, rows, w, c, ldc, row0, n0, epilogue);
}

// C [M x N] ≈ A · B on int8 panels [p0, p1); A already quantised (m rows rounded up to 12, zero
// rows past m).
void GemmInt8Panels(const uint8_t* a, const float* steps, const float* minimums, const Int8Packed& b, float* c, int m, int n, int p0, int p1,
                    const Epilogue& epilogue) {
  for (int p = p0; p < p1; p += 2) {
    const int panels = std::min(2, p1 - p);
    const int n0 = p * NR;
    const int w = std::min(panels * NR, n - n0);
    for (int i = 0; i < m; i += MR_WIDE)
      MicroKernelInt8(a + static_cast<size_t>(i) * b.k4, b.k4, b, p, panels, c + static_cast<size_t>(i) * n + n0, n, std::min(MR_WIDE, m - i), w, i,
                      steps, minimums, epilogue);
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

  // Runs `work` (a share of one product's panels) on the helper thread; Wait() for it.
  void Run(std::function<void()> work) {
    if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
    job_ = std::move(work);
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
      job_();
      finished_.store(seen, std::memory_order_release);
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
  std::function<void()> job_;
  std::atomic<uint64_t> posted_{0};
  std::atomic<uint64_t> finished_{0};
  std::atomic<bool> sleeping_{false};
  bool stop_ = false;  // guarded by mu_
};

// The eight lanes of a dot product's accumulator, summed pairwise.
__attribute__((target("avx2,fma"))) float SumLanes(__m256 acc) {
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, acc);
  return ((lanes[0] + lanes[4]) + (lanes[1] + lanes[5])) + ((lanes[2] + lanes[6]) + (lanes[3] + lanes[7]));
}

// Σ a[x]·b[x], eight lanes at a time.
__attribute__((target("avx2,fma"))) float Dot(const float* a, const float* b, int n) {
  __m256 acc = _mm256_setzero_ps();
  int x = 0;
  for (; x + 8 <= n; x += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(a + x), _mm256_loadu_ps(b + x), acc);
  float sum = SumLanes(acc);
  for (; x < n; x++) sum += a[x] * b[x];
  return sum;
}

// Dot(a, b[r], n) for four b's at once: each the same operations in the same order as Dot,
// but four independent chains, so the multiply-adds overlap instead of waiting on each other.
__attribute__((target("avx2,fma"))) void Dot4(const float* a, const float* const* b, int n, float* out) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0, acc2 = acc0, acc3 = acc0;
  int x = 0;
  for (; x + 8 <= n; x += 8) {
    const __m256 av = _mm256_loadu_ps(a + x);
    acc0 = _mm256_fmadd_ps(av, _mm256_loadu_ps(b[0] + x), acc0);
    acc1 = _mm256_fmadd_ps(av, _mm256_loadu_ps(b[1] + x), acc1);
    acc2 = _mm256_fmadd_ps(av, _mm256_loadu_ps(b[2] + x), acc2);
    acc3 = _mm256_fmadd_ps(av, _mm256_loadu_ps(b[3] + x), acc3);
  }
  float sums[4] = {SumLanes(acc0), SumLanes(acc1), SumLanes(acc2), SumLanes(acc3)};
  for (int r = 0; r < 4; r++) {
    for (int y = x; y < n; y++) sums[r] += a[y] * b[r][y];
    out[r] = sums[r];
  }
}

// out[x] = Σ_j weights[j]·values_j[x] for x in [0, hd), j in order, each column's sum a chain
// of multiply-adds from 0 (values_j = values + j·stride). Columns go 64 at a time in eight
// registers rather than through memory once per j.
__attribute__((target("avx2,fma"))) void WeightedSum(const float* weights, const float* values, int t, size_t stride, int hd, float* out) {
  int x0 = 0;
  for (; x0 + 64 <= hd; x0 += 64) {
    __m256 acc[8];
    for (int r = 0; r < 8; r++) acc[r] = _mm256_setzero_ps();
    for (int j = 0; j < t; j++) {
      const __m256 w = _mm256_set1_ps(weights[j]);
      const float* v = values + j * stride + x0;
      for (int r = 0; r < 8; r++) acc[r] = _mm256_fmadd_ps(w, _mm256_loadu_ps(v + 8 * r), acc[r]);
    }
    for (int r = 0; r < 8; r++) _mm256_storeu_ps(out + x0 + 8 * r, acc[r]);
  }
  for (; x0 + 8 <= hd; x0 += 8) {
    __m256 acc = _mm256_setzero_ps();
    for (int j = 0; j < t; j++) acc = _mm256_fmadd_ps(_mm256_set1_ps(weights[j]), _mm256_loadu_ps(values + j * stride + x0), acc);
    _mm256_storeu_ps(out + x0, acc);
  }
  for (; x0 < hd; x0++) {
    out[x0] = 0.0f;
    for (int j = 0; j < t; j++) out[x0] += weights[j] * values[j * stride + x0];
  }
}

// Self-attention of one sequence, every head: qkv is [t x 3d] (queries | keys | values, head
// h at columns h*hd of each), out is [t x d]. Queries are scaled before the products, as the
// model does; every token sees every token of its own sequence (no padding here).
__attribute__((target("avx2,fma"))) void Attention(const float* qkv, int t, int heads, int hd, float scale, float* out) {
  const int d = heads * hd;
  const size_t stride = static_cast<size_t>(3) * d;
  std::vector<float> q(hd), scores(t);
  for (int h = 0; h < heads; h++) {
    const float* keys = qkv + d + h * hd;
    for (int i = 0; i < t; i++) {
      const float* qi = qkv + i * stride + h * hd;
      for (int x = 0; x < hd; x++) q[x] = qi[x] * scale;
      int j = 0;
      for (; j + 4 <= t; j += 4) {
        const float* four[4] = {keys + j * stride, keys + (j + 1) * stride, keys + (j + 2) * stride, keys + (j + 3) * stride};
        Dot4(q.data(), four, hd, scores.data() + j);
      }
      for (; j < t; j++) scores[j] = Dot(q.data(), keys + j * stride, hd);
      float best = -INFINITY;
      for (j = 0; j < t; j++) best = std::max(best, scores[j]);
      float total = 0.0f;
      for (j = 0; j < t; j++) {
        scores[j] = std::exp(scores[j] - best);
        total += scores[j];
      }
      for (j = 0; j < t; j++) scores[j] = scores[j] / total;
      WeightedSum(scores.data(), qkv + 2 * d + h * hd, t, stride, hd, out + static_cast<size_t>(i) * d + h * hd);
    }
  }
}

// Layer norm of each row, (x − mean) · scale / sqrt(var + ε) + bias, computed exactly as the
// JavaScript it replaces did (ADR 0021): sums in double in column order, the mean, each centred
// value and the variance rounded to float32 where it rounded them (Math.fround), the rest in
// double and the result rounded to float32 on store. Products of two floats are exact in
// double, so a fused multiply-add the compiler may form gives the same double.
void LayerNorm(const float* in, float* out, int rows, int dims, const float* scale, const float* bias, float epsilon) {
  for (int r = 0; r < rows; r++) {
    const float* x = in + static_cast<size_t>(r) * dims;
    float* y = out + static_cast<size_t>(r) * dims;
    double sum = 0;
    for (int c = 0; c < dims; c++) sum += x[c];
    const float mean = static_cast<float>(sum / dims);
    double squares = 0;
    for (int c = 0; c < dims; c++) {
      const float centred = static_cast<float>(static_cast<double>(x[c]) - mean);
      y[c] = centred;
      squares += static_cast<double>(centred) * centred;
    }
    const float variance = static_cast<float>(squares / dims);
    const double inverse = 1.0 / std::sqrt(static_cast<double>(static_cast<float>(static_cast<double>(variance) + epsilon)));
    for (int c = 0; c < dims; c++) {
      const float factor = static_cast<float>(scale[c] * inverse);
      y[c] = static_cast<float>(static_cast<double>(factor) * y[c] + bias[c]);
    }
  }
}

// ---- The core's peak, for bench/embed.ts ----------------------------------------------------
// Twelve independent chains (enough to cover the instructions' latency on two pipes), nothing
// but the instruction measured: what one core can issue, at the clock it runs at now.
__attribute__((target("avx2,fma"))) float PeakFma(int64_t iterations) {
  __m256 acc[12];
  for (int r = 0; r < 12; r++) acc[r] = _mm256_set1_ps(0.001f * r);
  const __m256 x = _mm256_set1_ps(0.999f), y = _mm256_set1_ps(0.0001f);
  for (int64_t i = 0; i < iterations; i++)
    for (int r = 0; r < 12; r++) acc[r] = _mm256_fmadd_ps(acc[r], x, y);
  __m256 sum = acc[0];
  for (int r = 1; r < 12; r++) sum = _mm256_add_ps(sum, acc[r]);
  return SumLanes(sum);
}

__attribute__((target("avx512f,avx512vnni"))) int32_t PeakVnni(int64_t iterations) {
  __m512i acc[12];
  for (int r = 0; r < 12; r++) acc[r] = _mm512_set1_epi32(r);
  const __m512i x = _mm512_set1_epi8(3), y = _mm512_set1_epi8(5);
  for (int64_t i = 0; i < iterations; i++)
    for (int r = 0; r < 12; r++) acc[r] = _mm512_dpbusd_epi32(acc[r], x, y);
  __m512i sum = acc[0];
  for (int r = 1; r < 12; r++) sum = _mm512_add_epi32(sum, acc[r]);
  return _mm512_reduce_add_epi32(sum);
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

bool HasWide() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f");
}

napi_value Supported(napi_env env, napi_callback_info) {
  __builtin_cpu_init();
  napi_value result;
  napi_get_boolean(env, __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"), &result);
  return result;
}

bool HasInt8() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vnni");
}

// int8(): whether packInt8 and gemmInt8 run on this CPU (AVX-512 VNNI).
napi_value Int8Supported(napi_env env, napi_callback_info) {
  napi_value result;
  napi_get_boolean(env, HasInt8(), &result);
  return result;
}

// packInt8(buffer, byteOffset, k, n) → ArrayBuffer of the weight quantised for gemmInt8
napi_value PackInt8Call(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  int64_t k, n;
  float* b;
  if (argc < 4 || !Int(env, argv[2], &k) || !Int(env, argv[3], &n) || k <= 0 || n <= 0 || !View(env, argv[0], argv[1], k * n, &b))
    return Throw(env, "packInt8(buffer, byteOffset, k, n): bad arguments");
  void* data = nullptr;
  napi_value out;
  if (napi_create_arraybuffer(env, Int8PackedBytes(static_cast<int>(k), static_cast<int>(n)), &data, &out) != napi_ok)
    return Throw(env, "packInt8: out of memory");
  PackInt8(b, static_cast<int>(k), static_cast<int>(n), data);
  return out;
}

// peak(kind, iterations) → operations a second (a multiply-add counts 2): 'fma' float32 AVX2
// FMA (AVX-512 FMA is no faster on CPUs that split it, and equal elsewhere per lane), 'vnni'
// int8 vpdpbusd (0 without it).
napi_value Peak(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  char kind[8] = {0};
  size_t length = 0;
  int64_t iterations = 0;
  if (argc < 2 || napi_get_value_string_utf8(env, argv[0], kind, sizeof(kind), &length) != napi_ok || !Int(env, argv[1], &iterations) ||
      iterations <= 0)
    return Throw(env, "peak(kind, iterations): bad arguments");
  const bool vnni = std::strcmp(kind, "vnni") == 0;
  if (!vnni && std::strcmp(kind, "fma") != 0) return Throw(env, "peak: kind is fma or vnni");
  double operations = 0;
  volatile float sink_float = 0;
  volatile int32_t sink_int = 0;
  const auto start = std::chrono::steady_clock::now();
  if (vnni && HasInt8()) {
    sink_int = PeakVnni(iterations);
    operations = static_cast<double>(iterations) * 12 * 64 * 2;
  } else if (!vnni) {
    sink_float = PeakFma(iterations);
    operations = static_cast<double>(iterations) * 12 * 8 * 2;
  }
  (void)sink_float;
  (void)sink_int;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  napi_value result;
  napi_create_double(env, seconds > 0 ? operations / seconds : 0, &result);
  return result;
}

bool FloatProperty(napi_env env, napi_value object, const char* name, int64_t count, const float** out);

// layerNorm(inBuf, inOff, outBuf, outOff, rows, dims, scale, bias, epsilon); scale and bias
// Float32Arrays of dims.
napi_value LayerNormCall(napi_env env, napi_callback_info info) {
  size_t argc = 9;
  napi_value argv[9];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  int64_t rows, dims;
  double epsilon;
  if (argc < 9 || !Int(env, argv[4], &rows) || !Int(env, argv[5], &dims) || napi_get_value_double(env, argv[8], &epsilon) != napi_ok || rows <= 0 ||
      dims <= 0)
    return Throw(env, "layerNorm: bad arguments");
  float *in, *out;
  if (!View(env, argv[0], argv[1], rows * dims, &in) || !View(env, argv[2], argv[3], rows * dims, &out))
    return Throw(env, "layerNorm: a view is out of its buffer");
  napi_value holder;
  napi_create_object(env, &holder);
  napi_set_named_property(env, holder, "scale", argv[6]);
  napi_set_named_property(env, holder, "bias", argv[7]);
  const float *scale, *bias;
  if (!FloatProperty(env, holder, "scale", dims, &scale) || !FloatProperty(env, holder, "bias", dims, &bias) || !scale || !bias)
    return Throw(env, "layerNorm: scale and bias must be Float32Arrays of dims");
  LayerNorm(in, out, static_cast<int>(rows), static_cast<int>(dims), scale, bias, static_cast<float>(epsilon));
  return nullptr;
}

// wide(): whether gemm may be asked for the AVX-512 micro-kernel on this CPU.
napi_value Wide(napi_env env, napi_callback_info) {
  napi_value result;
  napi_get_boolean(env, HasWide(), &result);
  return result;
}

// A Float32Array property of `object` with at least `count` elements; absent is fine (nullptr).
bool FloatProperty(napi_env env, napi_value object, const char* name, int64_t count, const float** out) {
  *out = nullptr;
  bool has = false;
  if (napi_has_named_property(env, object, name, &has) != napi_ok) return false;
  if (!has) return true;
  napi_value value;
  napi_valuetype type;
  if (napi_get_named_property(env, object, name, &value) != napi_ok || napi_typeof(env, value, &type) != napi_ok) return false;
  if (type == napi_undefined) return true;
  bool typed = false;
  napi_is_typedarray(env, value, &typed);
  if (!typed) return false;
  napi_typedarray_type kind;
  size_t length = 0;
  void* data = nullptr;
  if (napi_get_typedarray_info(env, value, &kind, &length, &data, nullptr, nullptr) != napi_ok || kind != napi_float32_array ||
      static_cast<int64_t>(length) < count)
    return false;
  *out = static_cast<const float*>(data);
  return true;
}

bool BoolProperty(napi_env env, napi_value object, const char* name, bool* out) {
  *out = false;
  bool has = false;
  if (napi_has_named_property(env, object, name, &has) != napi_ok) return false;
  if (!has) return true;
  napi_value value;
  return napi_get_named_property(env, object, name, &value) == napi_ok && napi_get_value_bool(env, value, out) == napi_ok;
}

// gemm's optional last argument { bias?: Float32Array [n], residual?: Float32Array [m x n],
// relu?: boolean, wide?: boolean }; false when a field is there but not as described.
bool ReadOptions(napi_env env, napi_value options, int64_t m, int64_t n, Epilogue* epilogue, bool* wide) {
  napi_valuetype type;
  if (napi_typeof(env, options, &type) != napi_ok) return false;
  if (type == napi_undefined) return true;
  if (type != napi_object) return false;
  return FloatProperty(env, options, "bias", n, &epilogue->bias) && FloatProperty(env, options, "residual", m * n, &epilogue->residual) &&
         BoolProperty(env, options, "relu", &epilogue->relu) && BoolProperty(env, options, "wide", wide);
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

// gemm(aBuf, aOff, packed, cBuf, cOff, m, k, n, threads, options?)
napi_value Gemm(napi_env env, napi_callback_info info) {
  size_t argc = 10;
  napi_value argv[10];
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
  Epilogue epilogue;
  bool wide = false;
  if (argc >= 10 && !ReadOptions(env, argv[9], m, n, &epilogue, &wide)) return Throw(env, "gemm: bad options (bias, residual: Float32Arrays long enough)");
  if (wide && !HasWide()) return Throw(env, "gemm: wide asked for on a CPU without AVX-512");
  const float* bp = static_cast<const float*>(packed);
  if (threads >= 2 && panels >= 2 && m * k * n >= (1 << 18)) {
    void* data = nullptr;
    if (napi_get_instance_data(env, &data) != napi_ok || data == nullptr) return Throw(env, "gemm: no helper thread");
    Helper* helper = static_cast<Helper*>(data);
    const int split = static_cast<int>(panels / 2);
    helper->Run([=] { GemmPanels(a, bp, c, static_cast<int>(m), static_cast<int>(k), static_cast<int>(n), split, static_cast<int>(panels), epilogue, wide); });
    GemmPanels(a, bp, c, static_cast<int>(m), static_cast<int>(k), static_cast<int>(n), 0, split, epilogue, wide);
    helper->Wait();
  } else {
    GemmPanels(a, bp, c, static_cast<int>(m), static_cast<int>(k), static_cast<int>(n), 0, static_cast<int>(panels), epilogue, wide);
  }
  return nullptr;
}

// gemmInt8(aBuf, aOff, packedInt8, cBuf, cOff, m, k, n, threads, options?): C ≈ A · B, A
// quantised here row by row; options as gemm's (bias, residual, relu; `wide` is implied).
napi_value GemmInt8(napi_env env, napi_callback_info info) {
  size_t argc = 10;
  napi_value argv[10];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  int64_t m, k, n, threads;
  if (argc < 9 || !Int(env, argv[5], &m) || !Int(env, argv[6], &k) || !Int(env, argv[7], &n) || !Int(env, argv[8], &threads) || m <= 0 ||
      k <= 0 || n <= 0)
    return Throw(env, "gemmInt8: bad arguments");
  if (!HasInt8()) return Throw(env, "gemmInt8: this CPU has no AVX-512 VNNI");
  float *a, *c;
  void* packed = nullptr;
  size_t packed_length = 0;
  if (!View(env, argv[0], argv[1], m * k, &a) || !View(env, argv[3], argv[4], m * n, &c) ||
      napi_get_arraybuffer_info(env, argv[2], &packed, &packed_length) != napi_ok ||
      packed_length < Int8PackedBytes(static_cast<int>(k), static_cast<int>(n)))
    return Throw(env, "gemmInt8: a view is out of its buffer");
  Epilogue epilogue;
  bool wide = false;
  if (argc >= 10 && !ReadOptions(env, argv[9], m, n, &epilogue, &wide)) return Throw(env, "gemmInt8: bad options (bias, residual: Float32Arrays long enough)");
  const Int8Packed b = Int8View(packed, static_cast<int>(k), static_cast<int>(n));
  const int rows = static_cast<int>((m + MR_WIDE - 1) / MR_WIDE * MR_WIDE);
  thread_local std::vector<uint8_t> quantised;
  thread_local std::vector<float> steps, minimums;
  quantised.assign(static_cast<size_t>(rows) * b.k4, 0);
  steps.assign(rows, 0.0f);
  minimums.assign(rows, 0.0f);
  QuantiseRows(a, static_cast<int>(m), static_cast<int>(k), b.k4, quantised.data(), steps.data(), minimums.data());
  const int panels = static_cast<int>((n + NR - 1) / NR);
  const uint8_t* q = quantised.data();
  const float* step = steps.data();
  const float* low = minimums.data();
  const int mm = static_cast<int>(m), nn = static_cast<int>(n);
  if (threads >= 2 && panels >= 4 && m * k * n >= (1 << 18)) {
    void* data = nullptr;
    if (napi_get_instance_data(env, &data) != napi_ok || data == nullptr) return Throw(env, "gemmInt8: no helper thread");
    Helper* helper = static_cast<Helper*>(data);
    const int split = panels / 4 * 2;  // an even split: every share starts on a pair of panels
    helper->Run([=] { GemmInt8Panels(q, step, low, b, c, mm, nn, split, panels, epilogue); });
    GemmInt8Panels(q, step, low, b, c, mm, nn, 0, split, epilogue);
    helper->Wait();
  } else {
    GemmInt8Panels(q, step, low, b, c, mm, nn, 0, panels, epilogue);
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
      {"wide", nullptr, Wide, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"int8", nullptr, Int8Supported, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"peak", nullptr, Peak, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"layerNorm", nullptr, LayerNormCall, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"packInt8", nullptr, PackInt8Call, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"gemmInt8", nullptr, GemmInt8, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"pack", nullptr, Pack, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"gemm", nullptr, Gemm, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"attention", nullptr, AttentionCall, nullptr, nullptr, nullptr, napi_default, nullptr},
  };
  napi_define_properties(env, exports, sizeof(props) / sizeof(props[0]), props);
  return exports;
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
