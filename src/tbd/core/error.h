// Errors that reach the user. Every message says what was wrong and what to do.
#pragma once

#include <stdexcept>
#include <string>

namespace tbd {

// A run failed (bad data file, NaN loss, out of memory, ...): exit status 1.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The command line asked for something impossible: exit status 2.
class UsageError : public Error {
 public:
  using Error::Error;
};

// An exception's message for a person: a LibTorch error's without the C++
// backtrace it carries (c10::Error::what() appends one).
std::string error_message(const std::exception& e);

}  // namespace tbd
