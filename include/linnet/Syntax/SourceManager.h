//===- SourceManager.h - Source buffers and locations -----------*- C++ -*-===//
//
// Owns the text of every source file and maps byte offsets to line:column.
// A SourceLoc is a (buffer, offset) pair, cheap to copy and to store in AST
// nodes; line and column are computed only when a diagnostic is printed.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_SYNTAX_SOURCEMANAGER_H
#define LINNET_SYNTAX_SOURCEMANAGER_H

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace linnet {

struct SourceLoc {
  uint32_t buffer = 0; // 0 = invalid
  uint32_t offset = 0;
  bool isValid() const { return buffer != 0; }
};

struct LineCol {
  uint32_t line = 0; // 1-based
  uint32_t col = 0;  // 1-based, in bytes
};

class SourceManager {
public:
  /// Reads a file from disk. Returns the buffer id, or std::nullopt with
  /// `error` set to a readable reason.
  std::optional<uint32_t> addFile(const std::string &path, std::string &error);
  /// Adds an in-memory buffer. `firstLine` lets a chunk of a larger file keep
  /// the line numbers of the original (used by --split-input-file).
  uint32_t addBuffer(std::string name, std::string text, uint32_t firstLine = 1);

  std::string_view text(uint32_t buffer) const;
  const std::string &name(uint32_t buffer) const;
  LineCol lineCol(SourceLoc loc) const;
  /// The full text of the line that contains `loc`, without its newline.
  std::string_view lineText(SourceLoc loc) const;

private:
  struct Buffer {
    std::string name;
    std::string text;
    uint32_t firstLine = 1;
    mutable std::vector<uint32_t> lineStarts; // computed lazily
  };
  const Buffer &get(uint32_t buffer) const;
  void computeLines(const Buffer &b) const;
  std::vector<std::unique_ptr<Buffer>> buffers_;
};

} // namespace linnet

#endif // LINNET_SYNTAX_SOURCEMANAGER_H
