// PredictMode: how a kernel row becomes a time on a target GPU.
//   absolute  the cost model alone;
//   transfer  the row's measured duration scaled by model(target)/model(source), so the model's
//             bias for that kernel cancels (every row must carry duration_us > 0 and gpu);
//   automatic transfer where the row was measured (duration_us > 0 and gpu), absolute elsewhere.
#pragma once
#include <string>
#include <string_view>

namespace kcast {

enum class PredictMode { absolute, transfer, automatic };

std::string_view to_string(PredictMode m);  // "absolute", "transfer", "auto"
// Throws InputError naming `option` when `s` is not one of auto|transfer|absolute.
PredictMode parse_predict_mode(std::string_view s, const std::string& option = "--mode");

}  // namespace kcast
