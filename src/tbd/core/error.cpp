#include "tbd/core/error.h"

#include <c10/util/Exception.h>

namespace tbd {

std::string error_message(const std::exception& e) {
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&e)) return c10_error->what_without_backtrace();
  return e.what();
}

}  // namespace tbd
