// The frame every kcast HTML report shares: a self-contained page (inline CSS, no scripts, no
// network references) with a title and a subtitle line, and its closing note.
#pragma once
#include <string>

namespace kcast {

std::string html_page_start(const std::string& title, const std::string& subtitle);
std::string html_page_end();

}  // namespace kcast
