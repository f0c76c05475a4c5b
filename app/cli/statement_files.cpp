// The file side of dpx statement and dpx verify: the whole-or-nothing write and the bounded read
// of a statement, kept apart from the commands so the system calls and their failures sit together.
#include "statement_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <system_error>

namespace dpx::cli {

using core::JsonValue;
using core::Result;
using core::Status;

namespace {

// Whether `path` names an open file descriptor: /dev/fd/N, /proc/<pid>/fd/N, or a symbolic link
// (like /dev/stdout) leading through one.
bool namesADescriptor(const std::string& path) {
  namespace fs = std::filesystem;
  const auto isDescriptorName = [](const std::string& p) {
    return p.starts_with("/dev/fd/") || (p.starts_with("/proc/") && p.find("/fd/") != std::string::npos);
  };
  fs::path name = path;
  std::error_code error;
  for (int depth = 0; depth < 40; ++depth) {
    if (isDescriptorName(name.lexically_normal().string())) return true;
    if (!fs::is_symlink(fs::symlink_status(name, error))) return false;
    const fs::path link = fs::read_symlink(name, error);
    if (error) return false;
    name = link.is_absolute() ? link : name.parent_path() / link;
  }
  return false;
}

// Where writing `path` lands: through a symbolic link (and a link to a link) to its target, so
// that the link survives the rename.
std::filesystem::path writeTarget(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path target = path;
  std::error_code error;
  for (int depth = 0; fs::is_symlink(fs::symlink_status(target, error)); ++depth) {
    const fs::path link = fs::read_symlink(target, error);
    if (error || depth == 127) return path;  // a loop: writing replaces the link itself
    target = link.is_absolute() ? link : target.parent_path() / link;
  }
  return target;
}

constexpr std::uintmax_t kMaxStatementBytes = 16 * 1024 * 1024;

// The failures are worded as they always have been (the operating system's reason, or "file to
// open is a directory"), since scripts may match them.
Result<std::string> readStatementBytes(const std::string& path) {
  const auto cannotRead = [&](const std::string& reason) {
    return Status::ioError("cannot read " + path + ": " + reason);
  };
  if (path.empty()) return cannotRead("No file name specified");
  std::ifstream file(path, std::ios::binary);
  if (!file) return cannotRead(std::strerror(errno));
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) return cannotRead("file to open is a directory");
  const std::uintmax_t size =
      std::filesystem::is_regular_file(path, error) ? std::filesystem::file_size(path, error) : 0;
  if (!error && size > kMaxStatementBytes) {
    return Status::invalidArgument(path + ": " + std::to_string(size) +
                                   " bytes is too large for a privacy statement (at most 16 MiB)");
  }
  // A pipe has no size to check beforehand: read one byte past the limit at most.
  std::string bytes(kMaxStatementBytes + 1, '\0');
  file.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (file.bad()) return cannotRead(std::strerror(errno));
  bytes.resize(static_cast<std::size_t>(file.gcount()));
  if (bytes.size() > kMaxStatementBytes) {
    return Status::invalidArgument(path + ": more than " + std::to_string(kMaxStatementBytes) +
                                   " bytes is too large for a privacy statement (at most 16 MiB)");
  }
  return bytes;
}

}  // namespace

bool isStandardOutput(const std::string& path) {
  struct stat target {};
  struct stat out {};
  return ::stat(path.c_str(), &target) == 0 && ::fstat(STDOUT_FILENO, &out) == 0 && target.st_dev == out.st_dev &&
         target.st_ino == out.st_ino;
}

Status writeWholeFile(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  const auto cannotWrite = [&](const std::string& reason) {
    return Status::ioError("cannot write " + path + ": " + reason);
  };
  std::error_code error;
  const fs::file_status existing = fs::status(path, error);
  const bool exists = fs::exists(existing);
  if (exists && ::access(path.c_str(), W_OK) != 0) return cannotWrite("Existing file " + path + " is not writable");
  if (fs::is_directory(existing)) return cannotWrite("Filename refers to a directory");
  // A device or a pipe (/dev/null, a FIFO), or a name for an open descriptor (/dev/stdout,
  // /proc/self/fd/1: maybe the file a shell opened with >>), is written into, the descriptor's
  // file appended to: a file renamed over it would replace the device, or the shell's file.
  const bool descriptor = namesADescriptor(path);
  if (exists && (descriptor || !fs::is_regular_file(existing))) {
    std::FILE* sink = std::fopen(path.c_str(), descriptor ? "ab" : "wb");
    if (sink == nullptr) return cannotWrite(std::strerror(errno));
    int failure = 0;
    if (std::fwrite(text.data(), 1, text.size(), sink) != text.size() || std::fflush(sink) != 0) {
      failure = errno != 0 ? errno : EIO;
    }
    if (std::fclose(sink) != 0 && failure == 0) failure = errno;
    return failure == 0 ? Status::ok() : cannotWrite(std::strerror(failure));
  }
  const fs::path target = writeTarget(path);

  static constexpr char kLetters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::mt19937_64 random(std::random_device{}());
  std::uniform_int_distribution<std::size_t> letter(0, sizeof kLetters - 2);
  fs::path temporary;
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    std::string suffix = ".";
    for (int i = 0; i < 6; ++i) suffix += kLetters[letter(random)];
    temporary = target;
    temporary += suffix;
    // O_EXCL: a new file, never someone else's. Replacing a file: private until it has the old
    // file's mode, so no one can open the new statement in between.
    fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, exists ? 0600 : 0666);
    if (fd < 0 && (errno != EEXIST || attempt == 99)) return cannotWrite(std::strerror(errno));
  }
  int failure = 0;
  if (exists && ::fchmod(fd, static_cast<mode_t>(existing.permissions() & fs::perms::all)) != 0) failure = errno;
  std::FILE* file = failure == 0 ? ::fdopen(fd, "wb") : nullptr;
  if (file == nullptr) {
    if (failure == 0) failure = errno;
    ::close(fd);
    fs::remove(temporary, error);
    return cannotWrite(std::strerror(failure));
  }
  errno = 0;
  if (std::fwrite(text.data(), 1, text.size(), file) != text.size() || std::fflush(file) != 0) {
    failure = errno != 0 ? errno : EIO;
  }
  // Durable before it replaces the old file. A file system that cannot sync says so (EINVAL,
  // ENOTSUP, EROFS); any other error (ENOSPC, EDQUOT, EIO on a network file system) may be the
  // only report of a lost write.
  if (failure == 0 && ::fsync(fileno(file)) != 0 && errno != EINVAL && errno != ENOTSUP && errno != EROFS) {
    failure = errno;
  }
  if (std::fclose(file) != 0 && failure == 0) failure = errno;
  if (failure == 0 && std::rename(temporary.c_str(), target.c_str()) != 0) failure = errno;
  if (failure != 0) {
    fs::remove(temporary, error);
    return cannotWrite(std::strerror(failure));
  }
  return Status::ok();
}

Result<JsonValue> readStatementFile(const std::string& path) {
  DPX_ASSIGN_OR_RETURN(const std::string bytes, readStatementBytes(path));
  Result<JsonValue> doc = core::parseJson(bytes);
  if (!doc) return Status::parseError(path + ": not JSON: " + doc.status().message());
  if (!doc->isObject()) return Status::parseError(path + ": expected a JSON object (a privacy statement)");
  return std::move(doc).value();
}

}  // namespace dpx::cli
