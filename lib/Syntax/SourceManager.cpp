//===- SourceManager.cpp --------------------------------------------------===//
#include "linnet/Syntax/SourceManager.h"
#include "linnet/Support/Input.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

using namespace linnet;

std::optional<uint32_t> SourceManager::addFile(const std::string &path,
                                               std::string &error) {
  // Bounded (LINNET_MAX_SOURCE_BYTES): `/dev/zero` or a huge file stops at
  // the limit; a directory is refused rather than read as an empty module.
  std::string text;
  if (!input::readFile(path, input::maxSourceBytes(), "LINNET_MAX_SOURCE_BYTES", text, error))
    return std::nullopt;
  // Offsets are 32-bit (SourceLoc).
  if (text.size() >= UINT32_MAX) {
    error = "larger than 4 GiB";
    return std::nullopt;
  }
  input::noteSourceRead(path);
  return addBuffer(path, std::move(text));
}

uint32_t SourceManager::addBuffer(std::string name, std::string text,
                                  uint32_t firstLine) {
  auto b = std::make_unique<Buffer>();
  b->name = std::move(name);
  b->text = std::move(text);
  b->firstLine = firstLine;
  buffers_.push_back(std::move(b));
  return static_cast<uint32_t>(buffers_.size());
}

const SourceManager::Buffer &SourceManager::get(uint32_t buffer) const {
  return *buffers_.at(buffer - 1);
}

std::string_view SourceManager::text(uint32_t buffer) const {
  return get(buffer).text;
}

const std::string &SourceManager::name(uint32_t buffer) const {
  return get(buffer).name;
}

void SourceManager::computeLines(const Buffer &b) const {
  if (!b.lineStarts.empty())
    return;
  b.lineStarts.push_back(0);
  for (uint32_t i = 0; i < b.text.size(); ++i)
    if (b.text[i] == '\n')
      b.lineStarts.push_back(i + 1);
}

LineCol SourceManager::lineCol(SourceLoc loc) const {
  if (!loc.isValid())
    return {};
  const Buffer &b = get(loc.buffer);
  computeLines(b);
  auto it = std::upper_bound(b.lineStarts.begin(), b.lineStarts.end(),
                             loc.offset);
  uint32_t idx = static_cast<uint32_t>(it - b.lineStarts.begin()) - 1;
  return {idx + b.firstLine, loc.offset - b.lineStarts[idx] + 1};
}

std::string_view SourceManager::lineText(SourceLoc loc) const {
  if (!loc.isValid())
    return {};
  const Buffer &b = get(loc.buffer);
  computeLines(b);
  auto it = std::upper_bound(b.lineStarts.begin(), b.lineStarts.end(),
                             loc.offset);
  uint32_t start = *(it - 1);
  uint32_t end = start;
  while (end < b.text.size() && b.text[end] != '\n' && b.text[end] != '\r')
    ++end;
  return std::string_view(b.text).substr(start, end - start);
}
