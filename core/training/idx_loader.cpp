// parseIdx and gunzip (dataset.h): the IDX format of MNIST and Fashion-MNIST (big-endian magic,
// dimensions, then raw unsigned bytes) and the gzip layer those files ship in. Both formats put
// sizes in a header that may lie, so every claimed size is checked against the bytes actually
// present and against the caller's limits before anything is allocated for it.
#include <zlib.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "training/dataset.h"
#include "training/dataset_parsing.h"

namespace dpx::core::training {
namespace {

// The largest expansion deflate can achieve (RFC 1951 blocks of 258-byte matches): 1032:1.
constexpr std::uint64_t kMaxDeflateRatio = 1032;
// First output buffer when the trailer gives no usable hint.
constexpr std::uint64_t kInitialChunk = std::uint64_t{64} << 10;

bool isGzip(std::span<const std::uint8_t> bytes) { return bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b; }

std::uint32_t readBigEndian32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | std::uint32_t{p[3]};
}

std::uint32_t readLittleEndian32(const std::uint8_t* p) {
  return (std::uint32_t{p[3]} << 24) | (std::uint32_t{p[2]} << 16) | (std::uint32_t{p[1]} << 8) | std::uint32_t{p[0]};
}

std::string hex32(std::uint32_t value) {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "0x%08X", value);
  return buffer;
}

const char* idxTypeName(std::uint8_t type) {
  switch (type) {
    case 0x08:
      return "unsigned byte";
    case 0x09:
      return "signed byte";
    case 0x0B:
      return "int16";
    case 0x0C:
      return "int32";
    case 0x0D:
      return "float32";
    case 0x0E:
      return "float64";
    default:
      return "unknown";
  }
}

// Not gzip: the bytes as they are, within the limit.
Result<std::vector<std::uint8_t>> copyWithinLimit(std::span<const std::uint8_t> bytes, std::uint64_t limit) {
  if (bytes.size() > limit) {
    return Status::invalidArgument("gzip: " + std::to_string(bytes.size()) + " bytes, above the limit of " +
                                   std::to_string(limit) + " bytes");
  }
  return std::vector<std::uint8_t>(bytes.begin(), bytes.end());
}

// The first output buffer's size, from the trailer's ISIZE where it is credible.
Result<std::uint64_t> firstBufferSize(std::span<const std::uint8_t> bytes, std::uint64_t limit) {
  // 10-byte header + 8-byte trailer (CRC32, ISIZE) at least.
  if (bytes.size() < 18) {
    return Status::parseError("gzip: truncated: " + std::to_string(bytes.size()) +
                              " bytes, fewer than the 18 of a gzip header and trailer");
  }
  // ISIZE is the last member's size mod 2³², so the whole output is at least that large. A
  // value no deflate stream of this length could reach is no claim at all (a truncated file or
  // trailing junk ends in arbitrary bytes): inflating then says what is really wrong.
  const std::uint32_t declared = readLittleEndian32(bytes.data() + bytes.size() - 4);
  const std::uint64_t reachable = static_cast<std::uint64_t>(bytes.size()) * kMaxDeflateRatio;
  if (declared > limit && declared <= reachable) {
    return Status::invalidArgument("gzip: the trailer (byte " + std::to_string(bytes.size() - 4) + ") declares " +
                                   std::to_string(declared) + " decompressed bytes, above the limit of " +
                                   std::to_string(limit) + " bytes");
  }
  // ISIZE can be forged, so the first buffer is also capped by the largest output this input
  // could produce; the real limit is enforced while inflating, chunk by chunk.
  const std::uint64_t initial = std::max<std::uint64_t>(declared, kInitialChunk);
  return std::min({initial, limit, reachable});
}

// Grows a full buffer; false when it is already at the limit (one more byte then means the
// output is too large).
bool makeRoom(std::vector<std::uint8_t>& out, std::size_t produced, std::uint64_t limit) {
  if (produced != out.size()) return true;
  if (out.size() >= limit) return false;
  const std::uint64_t grown = std::max<std::uint64_t>(out.size() * std::uint64_t{2}, kInitialChunk);
  out.resize(static_cast<std::size_t>(std::min(grown, limit)));
  return true;
}

// One call of zlib's inflate: its return code and the bytes it read and wrote.
struct InflateStep {
  int result = Z_OK;
  std::size_t used = 0;
  std::size_t written = 0;
};

InflateStep inflateInto(z_stream& stream, std::span<const std::uint8_t> input, std::uint8_t* output, std::size_t room) {
  const auto inChunk = static_cast<uInt>(std::min<std::size_t>(input.size(), UINT_MAX));
  const auto outChunk = static_cast<uInt>(std::min<std::size_t>(room, UINT_MAX));
  // zlib's API takes a non-const input pointer but never writes through it.
  stream.next_in = const_cast<Bytef*>(input.data());
  stream.avail_in = inChunk;
  stream.next_out = output;
  stream.avail_out = outChunk;
  const int result = inflate(&stream, Z_NO_FLUSH);
  return {result, inChunk - stream.avail_in, outChunk - stream.avail_out};
}

// A step that did not end a member: an error, or no progress although there was room.
Status checkStep(const z_stream& stream, const InflateStep& step, std::size_t consumed, std::size_t size) {
  if (step.result == Z_MEM_ERROR) throw std::bad_alloc();
  if (step.result != Z_OK && step.result != Z_BUF_ERROR) {
    return Status::parseError("gzip: byte " + std::to_string(consumed) + ": corrupt data (" +
                              (stream.msg ? stream.msg : "zlib error " + std::to_string(step.result)) + ")");
  }
  if (step.used == 0 && step.written == 0 && stream.avail_out != 0) {
    if (consumed == size) {
      return Status::parseError("gzip: truncated: the data ends at byte " + std::to_string(consumed) +
                                " before the end of the compressed stream");
    }
    return Status::parseError("gzip: byte " + std::to_string(consumed) + ": zlib made no progress");
  }
  return Status::ok();
}

// After a member's end: true when the input is done (or only zero padding is left), false when
// another member follows (concatenated members are one valid gzip file, RFC 1952 §2.2).
Result<bool> inputDone(std::span<const std::uint8_t> bytes, std::size_t consumed) {
  if (consumed == bytes.size()) return true;
  const auto rest = bytes.subspan(consumed);
  if (isGzip(rest)) return false;
  if (std::all_of(rest.begin(), rest.end(), [](std::uint8_t b) { return b == 0; })) return true;  // tape padding
  return Status::parseError("gzip: byte " + std::to_string(consumed) + ": unexpected data after the gzip stream");
}

// Inflates every member into `out`, growing it up to the limit.
Result<std::vector<std::uint8_t>> inflateMembers(z_stream& stream, std::span<const std::uint8_t> bytes,
                                                 std::uint64_t limit, std::vector<std::uint8_t> out) {
  std::size_t consumed = 0;
  std::size_t produced = 0;
  for (;;) {
    std::uint8_t probe = 0;
    const bool probing = !makeRoom(out, produced, limit);
    const InflateStep step =
        probing ? inflateInto(stream, bytes.subspan(consumed), &probe, 1)
                : inflateInto(stream, bytes.subspan(consumed), out.data() + produced, out.size() - produced);
    consumed += step.used;
    if (probing && step.written > 0) {
      return Status::invalidArgument("gzip: the decompressed data exceeds the limit of " + std::to_string(limit) +
                                     " bytes (stopped at byte " + std::to_string(consumed) + " of the input)");
    }
    produced += step.written;
    if (step.result == Z_STREAM_END) {
      DPX_ASSIGN_OR_RETURN(const bool done, inputDone(bytes, consumed));
      if (done) break;
      inflateReset(&stream);
      continue;
    }
    DPX_RETURN_IF_ERROR(checkStep(stream, step, consumed, bytes.size()));
  }
  out.resize(produced);
  return out;
}

Result<std::vector<std::uint8_t>> inflateGzip(std::span<const std::uint8_t> bytes, std::int64_t maxBytes) {
  const auto limit = static_cast<std::uint64_t>(std::max<std::int64_t>(maxBytes, 0));
  if (!isGzip(bytes)) return copyWithinLimit(bytes, limit);
  DPX_ASSIGN_OR_RETURN(const std::uint64_t initial, firstBufferSize(bytes, limit));
  std::vector<std::uint8_t> out(static_cast<std::size_t>(initial));
  z_stream stream{};
  if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK) return Status::invalidArgument("gzip: zlib failed to start");
  const std::unique_ptr<z_stream, int (*)(z_stream*)> cleanup(&stream, &inflateEnd);
  return inflateMembers(stream, bytes, limit, std::move(out));
}

struct IdxArray {
  std::span<const std::uint8_t> data;  // after the header
  std::vector<std::uint32_t> dims;
  std::size_t headerSize = 0;
};

Result<IdxArray> readIdxHeader(std::span<const std::uint8_t> bytes, int wantDims, const std::string& where) {
  if (bytes.size() < 4) {
    return Status::parseError(where + ": truncated header: " + std::to_string(bytes.size()) +
                              " bytes, but an IDX file starts with a 4-byte magic number");
  }
  const std::uint32_t magic = readBigEndian32(bytes.data());
  if (bytes[0] != 0 || bytes[1] != 0) {
    return Status::parseError(where + ": byte 0: magic number " + hex32(magic) +
                              " is not an IDX magic number (those start with two zero bytes)");
  }
  if (bytes[2] != 0x08) {
    char type[8];
    std::snprintf(type, sizeof type, "0x%02X", bytes[2]);
    return Status::parseError(where + ": byte 2: element type " + type + " (" + idxTypeName(bytes[2]) +
                              ") is not supported; only unsigned bytes (0x08) are");
  }
  if (bytes[3] != wantDims) {
    return Status::parseError(where + ": byte 3: " + std::to_string(bytes[3]) + " dimensions (magic " + hex32(magic) +
                              "), expected " + std::to_string(wantDims) + " (magic " +
                              hex32(0x800u + static_cast<std::uint32_t>(wantDims)) + ")");
  }
  IdxArray array;
  array.headerSize = 4 + 4 * static_cast<std::size_t>(wantDims);
  if (bytes.size() < array.headerSize) {
    return Status::parseError(where + ": truncated header: " + std::to_string(bytes.size()) + " bytes, but a " +
                              std::to_string(wantDims) + "-dimensional IDX header takes " +
                              std::to_string(array.headerSize));
  }
  for (int k = 0; k < wantDims; ++k) array.dims.push_back(readBigEndian32(bytes.data() + 4 + 4 * k));
  array.data = bytes.subspan(array.headerSize);
  return array;
}

// The data after the header must be exactly `claimed` bytes: fewer means a truncated file,
// more means the header does not describe the file.
Status checkPayload(const IdxArray& array, std::uint64_t claimed, const std::string& where, const std::string& what) {
  const std::uint64_t present = array.data.size();
  if (present < claimed) {
    return Status::parseError(where + ": the header claims " + what + " (" + std::to_string(claimed) +
                              " bytes from byte " + std::to_string(array.headerSize) + "), but only " +
                              std::to_string(present) + " bytes follow");
  }
  if (present > claimed) {
    return Status::parseError(where + ": byte " + std::to_string(array.headerSize + claimed) + ": " +
                              std::to_string(present - claimed) + " bytes after the data the header describes (" +
                              what + ")");
  }
  return Status::ok();
}

// Replaces gzipped bytes by their inflated copy, kept in `store`.
Status inflateIfGzip(std::span<const std::uint8_t>& bytes, std::vector<std::uint8_t>& store, std::int64_t maxBytes,
                     const std::string& where) {
  if (!isGzip(bytes)) return Status::ok();
  auto inflated = inflateGzip(bytes, maxBytes);
  if (!inflated) return inflated.status().withContext(where);
  store = std::move(inflated).value();
  bytes = store;
  return Status::ok();
}

// The images' header checked against the limits and the bytes present; their size in bytes.
Result<std::uint64_t> checkImages(const IdxArray& images, const LoadOptions& options, const std::string& where) {
  const std::uint64_t count = images.dims[0];
  const std::uint64_t rows = images.dims[1];
  const std::uint64_t cols = images.dims[2];
  const std::uint64_t pixels = rows * cols;  // both below 2³²: no overflow
  const std::string shape =
      std::to_string(count) + " images of " + std::to_string(rows) + "×" + std::to_string(cols) + " pixels";
  if (count == 0) return Status::parseError(where + ": byte 4: the header declares 0 images");
  if (count > static_cast<std::uint64_t>(std::max<std::int64_t>(options.maxRecords, 0))) {
    return Status::parseError(where + ": byte 4: " + std::to_string(count) + " images, above the limit of " +
                              std::to_string(options.maxRecords) + " records");
  }
  if (pixels == 0) return Status::parseError(where + ": bytes 8-15: " + shape + " have no features");
  const auto maxFeatures = static_cast<std::uint64_t>(std::clamp<std::int64_t>(options.maxFeatures, 0, INT_MAX - 1));
  if (pixels > maxFeatures) {
    return Status::parseError(where + ": bytes 8-15: " + std::to_string(rows) + "×" + std::to_string(cols) + " = " +
                              std::to_string(pixels) + " pixels, above the limit of " + std::to_string(maxFeatures) +
                              " features");
  }
  std::uint64_t claimed = 0;  // count ≤ 2³² and pixels < 2³¹: cannot overflow, checked anyway
  if (!detail::multiplyChecked(count, pixels, claimed) ||
      claimed > static_cast<std::uint64_t>(std::max<std::int64_t>(options.maxBytes, 0))) {
    return Status::parseError(where + ": the header claims " + shape + ", above the limit of " +
                              std::to_string(options.maxBytes) + " bytes");
  }
  DPX_RETURN_IF_ERROR(checkPayload(images, claimed, where, shape));
  return claimed;
}

// One label per image, and exactly the bytes the header claims.
Status checkLabels(const IdxArray& labels, std::uint64_t count, const std::string& where) {
  const std::uint64_t labelCount = labels.dims[0];
  if (labelCount != count) {
    return Status::parseError(where + ": byte 4: " + std::to_string(labelCount) + " labels for " +
                              std::to_string(count) + " images");
  }
  return checkPayload(labels, labelCount, where, std::to_string(labelCount) + " labels");
}

// Pixel bytes to intensities in [0, 1], the convention of every MNIST pipeline (torchvision's
// ToTensor): scaling "none" then means the data as those pipelines see it.
FeatureMatrix intensities(const IdxArray& images, std::uint64_t bytes) {
  FeatureMatrix features(static_cast<Eigen::Index>(images.dims[0]),
                         static_cast<Eigen::Index>(std::uint64_t{images.dims[1]} * images.dims[2]));
  const std::uint8_t* source = images.data.data();
  float* target = features.data();
  const std::size_t total = static_cast<std::size_t>(bytes);
  for (std::size_t i = 0; i < total; ++i) target[i] = static_cast<float>(source[i]) * (1.0f / 255.0f);
  return features;
}

Result<Dataset> parseIdxBytes(std::span<const std::uint8_t> images, std::span<const std::uint8_t> labels,
                              const LoadOptions& options, std::string_view what) {
  const std::string prefix(what);
  const std::string imagesWhere = prefix + " images";
  const std::string labelsWhere = prefix + " labels";
  std::vector<std::uint8_t> imageStore;
  std::vector<std::uint8_t> labelStore;
  DPX_RETURN_IF_ERROR(inflateIfGzip(images, imageStore, options.maxBytes, imagesWhere));
  DPX_RETURN_IF_ERROR(inflateIfGzip(labels, labelStore, options.maxBytes, labelsWhere));
  DPX_ASSIGN_OR_RETURN(const IdxArray imageArray, readIdxHeader(images, 3, imagesWhere));
  DPX_ASSIGN_OR_RETURN(const IdxArray labelArray, readIdxHeader(labels, 1, labelsWhere));
  DPX_ASSIGN_OR_RETURN(const std::uint64_t imageBytes, checkImages(imageArray, options, imagesWhere));
  const std::uint64_t count = imageArray.dims[0];
  DPX_RETURN_IF_ERROR(checkLabels(labelArray, count, labelsWhere));

  FeatureMatrix features = intensities(imageArray, imageBytes);
  std::vector<std::int32_t> classes(static_cast<std::size_t>(count));
  std::int32_t maxLabel = 0;
  for (std::size_t i = 0; i < classes.size(); ++i) {
    classes[i] = labelArray.data[i];
    maxLabel = std::max(maxLabel, classes[i]);
  }
  const int numClasses = maxLabel + 1;
  DPX_ASSIGN_OR_RETURN(Dataset data,
                       detail::finishDataset(what, std::move(features), std::move(classes), numClasses,
                                             detail::numberedClassNames(numClasses), options.effectiveScaling()));
  data.image = ImageShape{static_cast<int>(imageArray.dims[1]), static_cast<int>(imageArray.dims[2]), 1.0};
  return data;
}

}  // namespace

Result<std::vector<std::uint8_t>> gunzip(std::span<const std::uint8_t> bytes, std::int64_t maxBytes) {
  return detail::guarded<std::vector<std::uint8_t>>("gzip", [&] { return inflateGzip(bytes, maxBytes); });
}

Result<Dataset> parseIdx(std::span<const std::uint8_t> images, std::span<const std::uint8_t> labels,
                         const LoadOptions& options, std::string_view what) {
  return detail::guarded<Dataset>(what, [&] { return parseIdxBytes(images, labels, options, what); });
}

}  // namespace dpx::core::training
