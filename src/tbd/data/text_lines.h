// Reading text corpora: whole files, split into lines, checked to be UTF-8,
// with errors that name the file and the line so a user can fix the data.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tbd {

// Byte offset of the first invalid UTF-8 sequence in `text`, or npos when
// the text is valid (overlong forms, surrogates and code points past
// U+10FFFF are invalid, as in RFC 3629).
size_t find_invalid_utf8(std::string_view text);

// The file's bytes. Throws UsageError when it cannot be opened (a missing
// --data file is a usage mistake) and Error when reading fails.
std::string read_whole_file(const std::string& path);

// The file's lines without their "\n" or "\r\n". Throws Error naming
// "FILE:LINE" for invalid UTF-8 and "FILE" for an empty file.
std::vector<std::string> read_text_lines(const std::string& path);

// Whitespace-separated tokens of one line (spaces and tabs).
std::vector<std::string_view> split_tokens(std::string_view line);

}  // namespace tbd
