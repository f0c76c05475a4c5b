// Synthetic 28 × 28 image data in the IDX format of MNIST and Fashion-MNIST, for tests of the
// image models (CNN, ScatterNet) without the real datasets: 4 classes, class c brightening the
// c-th quarter of the rows, on uniform noise.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace dpx::test {

namespace detail {
inline void bigEndian32(std::vector<char>& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xFF));
}

inline void writeAll(const std::filesystem::path& file, const std::vector<char>& bytes) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}
}  // namespace detail

// Writes `set`-images-idx3-ubyte and `set`-labels-idx1-ubyte ("train" or "t10k") of `count`
// images into `directory`, the layout a directory source of the loaders reads.
inline void writeIdxImages(const std::filesystem::path& directory, const std::string& set, std::uint32_t count,
                           std::uint32_t seed) {
  std::vector<char> images;
  detail::bigEndian32(images, 0x00000803);
  detail::bigEndian32(images, count);
  detail::bigEndian32(images, 28);
  detail::bigEndian32(images, 28);
  std::vector<char> labels;
  detail::bigEndian32(labels, 0x00000801);
  detail::bigEndian32(labels, count);
  std::mt19937 engine(seed);
  std::uniform_int_distribution<int> noise(0, 120);
  for (std::uint32_t i = 0; i < count; ++i) {
    const int c = static_cast<int>(i % 4);
    for (int y = 0; y < 28; ++y) {
      for (int x = 0; x < 28; ++x) {
        const int base = (y / 7 == c) ? 120 : 0;
        images.push_back(static_cast<char>(static_cast<unsigned char>(base + noise(engine))));
      }
    }
    labels.push_back(static_cast<char>(c));
  }
  detail::writeAll(directory / (set + "-images-idx3-ubyte"), images);
  detail::writeAll(directory / (set + "-labels-idx1-ubyte"), labels);
}

// A directory source of `train` training and `test` test images under `root`.
inline std::filesystem::path writeIdxImageSource(const std::filesystem::path& root, std::uint32_t train,
                                                 std::uint32_t test) {
  const std::filesystem::path source = root / "images";
  std::filesystem::create_directories(source);
  writeIdxImages(source, "train", train, 1);
  writeIdxImages(source, "t10k", test, 2);
  return source;
}

}  // namespace dpx::test
