// Ctrl-C ends the measured window early; the run still writes a valid result
// marked partial. A second Ctrl-C kills the process as usual.
#pragma once

namespace tbd {

void install_interrupt_handler();
bool interrupt_requested();
void request_interrupt();  // what the handler does; tests call it directly
void clear_interrupt();

}  // namespace tbd
