# The embedder's AVX2 + FMA matrix products (ADR 0007). The same flags for each toolchain:
# make + g++/clang on Linux read cflags_cc; Xcode (macOS) ignores cflags_cc and reads
# xcode_settings. No MSVC settings: gemm.cc uses GCC/Clang target attributes and builtins,
# and native/build.cjs does not build on Windows (the embedder runs on WebAssembly there).
{
  "targets": [
    {
      "target_name": "polyphony_gemm",
      "sources": ["gemm.cc"],
      "cflags_cc": ["-O3", "-std=c++17"],
      "cflags_cc!": ["-fno-rtti"],
      "xcode_settings": {
        "CLANG_CXX_LANGUAGE_STANDARD": "c++17",
        "GCC_OPTIMIZATION_LEVEL": "3",
        "GCC_ENABLE_CPP_RTTI": "YES",
        "OTHER_CPLUSPLUSFLAGS": ["$(inherited)", "-O3", "-std=c++17"]
      }
    }
  ]
}
