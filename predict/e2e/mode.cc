#include "predict/e2e/mode.h"

#include "model/error.h"

namespace kcast {

std::string_view to_string(PredictMode m) {
  switch (m) {
    case PredictMode::absolute: return "absolute";
    case PredictMode::transfer: return "transfer";
    case PredictMode::automatic: return "auto";
  }
  return "auto";
}

PredictMode parse_predict_mode(std::string_view s, const std::string& option) {
  if (s == "auto") return PredictMode::automatic;
  if (s == "transfer") return PredictMode::transfer;
  if (s == "absolute") return PredictMode::absolute;
  throw InputError("option '" + option + "': '" + std::string(s) + "' is not one of auto, transfer, absolute");
}

}  // namespace kcast
