#include "engine/planner/weights.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

#include "engine/planner/mosaic_error.h"
#include "engine/planner/rng.h"

namespace sluice::planner {
namespace {

double PairwiseSum(const double* a, size_t n) {
  if (n < 8) {
    double res = 0.0;  // numpy starts from -0.0 only for empty input; 0.0 + x == x otherwise
    for (size_t i = 0; i < n; ++i) res += a[i];
    return res;
  }
  if (n <= 128) {
    double r[8];
    for (size_t k = 0; k < 8; ++k) r[k] = a[k];
    size_t i = 8;
    for (; i + 8 <= n; i += 8)
      for (size_t k = 0; k < 8; ++k) r[k] += a[i + k];
    double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  size_t n2 = n / 2;
  n2 -= n2 % 8;
  return PairwiseSum(a, n2) + PairwiseSum(a + n2, n - n2);
}

bool IsRelative(const StreamWeight& w) { return w.proportion.has_value(); }

}  // namespace

double NumpySum(std::span<const double> x) { return PairwiseSum(x.data(), x.size()); }

Result<int64_t> ParseEpochSize(std::string_view text) {
  auto bad = [&]() {
    return MosaicValueError("invalid epoch_size '" + std::string(text) +
                            "': expected an integer or a number with suffix k, m, b or t");
  };
  std::string_view s = text;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  if (s.empty()) return bad();
  int64_t value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec == std::errc() && end == s.data() + s.size()) return value;
  double mult = 0;
  switch (std::tolower(static_cast<unsigned char>(s.back()))) {
    case 'k': mult = 1e3; break;
    case 'm': mult = 1e6; break;
    case 'b': mult = 1e9; break;
    case 't': mult = 1e12; break;
    default: return bad();
  }
  std::string number(s.substr(0, s.size() - 1));
  if (number.empty() || number.find_first_not_of("0123456789.+-eE") != std::string::npos) return bad();
  char* stop = nullptr;
  const double v = std::strtod(number.c_str(), &stop);
  if (stop != number.c_str() + number.size() || !std::isfinite(v)) return bad();
  const double total = v * mult;
  if (!(total >= -9.2e18 && total <= 9.2e18)) return bad();
  return static_cast<int64_t>(total);
}

Result<Weighting> ApplyWeights(std::span<const StreamWeight> weights, std::span<const int64_t> samples,
                               std::optional<int64_t> choose_per_epoch, uint64_t seed) {
  if (weights.size() != samples.size() || weights.empty()) {
    return MosaicValueError("expected one sample count per stream (" + std::to_string(weights.size()) +
                            " streams, " + std::to_string(samples.size()) + " counts)");
  }
  for (size_t i = 0; i < weights.size(); ++i) {
    const StreamWeight& w = weights[i];
    const int given = w.proportion.has_value() + w.repeat.has_value() + w.choose.has_value();
    if (given > 1) {
      return MosaicValueError("At most one of `proportion`, `repeat`, and `choose` may be specified; the "
                              "others are derived (error in stream " + std::to_string(i) + ")");
    }
    if ((w.proportion && !(*w.proportion >= 0)) || (w.repeat && !(*w.repeat >= 0)) ||
        (w.choose && *w.choose < 0)) {
      return MosaicValueError("stream weights must be non-negative (error in stream " + std::to_string(i) + ")");
    }
    if (samples[i] < 0) return MosaicValueError("negative sample count in stream " + std::to_string(i));
  }
  const bool relative = IsRelative(weights[0]);
  for (size_t i = 0; i < weights.size(); ++i) {
    if (IsRelative(weights[i]) != relative) {
      return MosaicValueError(
          "Relative (`proportion`) and absolute (`repeat`, `choose`, none) stream weights are incompatible "
          "with each other (error in stream " + std::to_string(i) + ")");
    }
  }
  bool unweighted = true;
  for (const StreamWeight& w : weights)
    if (w.proportion || w.repeat || w.choose) unweighted = false;

  Weighting out;
  out.streams.resize(weights.size());
  if (relative || (unweighted && choose_per_epoch)) {
    int64_t E = 0;
    if (choose_per_epoch) {
      E = *choose_per_epoch;
      if (E < 0) return MosaicValueError("epoch_size must be non-negative, got " + std::to_string(E));
    } else {
      for (int64_t n : samples) E += n;
    }
    std::vector<double> p(weights.size());
    for (size_t i = 0; i < weights.size(); ++i)
      p[i] = relative ? *weights[i].proportion : static_cast<double>(samples[i]);
    const double total = NumpySum(p);
    int64_t sum = 0;
    for (size_t i = 0; i < p.size(); ++i) {
      p[i] = p[i] / total;
      const double product = static_cast<double>(E) * p[i];
      if (!std::isfinite(product)) return MosaicValueError("stream proportions must not all be zero");
      out.streams[i].proportion = p[i];
      out.streams[i].choose = static_cast<int64_t>(product);
      sum += out.streams[i].choose;
    }
    numpy::Generator rng = MakeRng(seed);
    SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> extra, rng.Choice(int64_t(weights.size()), E - sum));
    for (int64_t i : extra) ++out.streams[size_t(i)].choose;
    for (size_t i = 0; i < p.size(); ++i) {
      out.streams[i].repeat = static_cast<double>(out.streams[i].choose) / static_cast<double>(samples[i]);
      out.epoch_size += out.streams[i].choose;
    }
    return out;
  }
  if (choose_per_epoch) return MosaicValueError("Only provide `choose` when weighting streams relatively");
  int64_t sum = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    const StreamWeight& w = weights[i];
    int64_t c = samples[i];
    if (w.repeat) {
      const double product = *w.repeat * static_cast<double>(samples[i]);
      if (!(product < 9.2e18)) return MosaicValueError("stream " + std::to_string(i) + ": repeat is too large");
      c = static_cast<int64_t>(product);
    }
    if (w.choose) c = *w.choose;
    out.streams[i].choose = c;
    out.streams[i].repeat = static_cast<double>(c) / static_cast<double>(samples[i]);
    sum += c;
  }
  for (DerivedWeight& d : out.streams) d.proportion = static_cast<double>(d.choose) / static_cast<double>(sum);
  out.epoch_size = sum;
  return out;
}

}  // namespace sluice::planner
