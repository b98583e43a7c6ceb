{
  "targets": [
    {
      "target_name": "polyphony_gemm",
      "sources": ["gemm.cc"],
      "cflags_cc": ["-O3", "-std=c++17"],
      "cflags_cc!": ["-fno-rtti"]
    }
  ]
}
