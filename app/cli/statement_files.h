// Reading and writing the files of dpx statement and dpx verify: a write that replaces a file whole
// or not at all, and a bounded read of a statement. Apart from the commands: what the operating
// system can do to a file (devices, descriptors, links, full disks) is its own concern.
#pragma once

#include <string>

#include "common/status.h"
#include "io/json_reader.h"

namespace dpx::cli {

// The text in place of `path`, whole or not at all: written to a temporary file beside it and
// renamed over it (a device or a pipe is written into instead), so that a reader never sees half a
// statement and a failed write leaves the old file as it was. An existing file keeps its mode bits
// (not its owner, group, ACLs or extended attributes). The refusals are worded as they always have
// been (the operating system's reason), since scripts may match them.
core::Status writeWholeFile(const std::string& path, const std::string& text);

// Whether `path` is the file standard output writes to (then the statement went there, and a
// line saying so would follow it into whatever reads it).
bool isStandardOutput(const std::string& path);

// The JSON object in the file at `path` (at most 16 MiB, a pipe included); the refusal names the
// file and, for malformed JSON, the byte offset.
core::Result<core::JsonValue> readStatementFile(const std::string& path);

}  // namespace dpx::cli
