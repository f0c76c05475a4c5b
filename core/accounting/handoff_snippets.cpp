#include "accounting/handoff_snippets.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "common/format.h"
#include "io/json_writer.h"

namespace dpx::core::accounting {
namespace {

std::string integer(std::int64_t value) { return std::to_string(value); }

// The whole number of epochs K came from, or K·m/n to 10 digits.
std::string epochsText(const Params& p) { return formatNumber(nominalEpochs(p)); }

// ⌈n/m⌉: the length of a PyTorch DataLoader of batch size m over n records (drop_last=False).
std::int64_t loaderLength(const Params& p) { return (p.n + p.m - 1) / p.m; }

// ε rounded up to 4 significant digits: a budget the run's ε does not exceed.
double budget(double epsilon) {
  if (!(epsilon > 0.0)) return 1e-6;  // the libraries want a budget > 0
  const double scale = std::pow(10.0, 3.0 - std::floor(std::log10(epsilon)));
  return std::ceil(epsilon * scale * (1.0 - 1e-15)) / scale;
}

// The comment lines every snippet opens with after its title: the run and the statement's bound.
std::string runComment(const Params& p, const std::optional<DpSgdBound>& bound) {
  std::string out = "# The run: DP-SGD on n = " + integer(p.n) +
                    " records, Poisson batches of expected size m = " + integer(p.m) +
                    " (q = m/n = " + formatNumber(p.q()) + "),\n# noise multiplier sigma = " + formatNumber(p.sigma) +
                    ", clip norm L = " + formatNumber(p.L) + ", K = " + integer(p.K) + " steps (" + epochsText(p) +
                    " epochs), delta = " + formatNumber(p.delta) + ".\n";
  if (bound) {
    out += "# DP Explorer's statement: epsilon <= " + formatNumber(bound->epsilon) +
           " at delta = " + formatNumber(p.delta) + " (" + bound->accountant + ", upper bound).\n";
  } else {
    out += "# DP Explorer's statement gives no DP-SGD upper bound for this run (see its accountants' violations).\n";
  }
  if (p.sampling && *p.sampling != Sampling::kPoisson) {
    out += "# NOTE: the run samples its batches by " + std::string(samplingName(*p.sampling)) +
           " sampling; the configuration below trains and accounts Poisson batches instead.\n";
  }
  if (p.neighbouring && *p.neighbouring != Neighbouring::kAddRemove) {
    out += "# NOTE: the run asks for " + std::string(neighbouringName(*p.neighbouring)) +
           " neighbours; these libraries account add/remove neighbours under Poisson sampling.\n";
  }
  if (p.schedule == Schedule::kDecreasing) {
    out += "# NOTE: the schedule knob is decreasing (dp-sgld's eta_k = 1/(2*beta + lambda*k/2), beta = " +
           formatNumber(p.beta) + ", lambda = " + formatNumber(p.lambda) +
           "); DP-SGD runs a constant learning rate, and its epsilon does not depend on it.\n";
  }
  return out;
}

std::string opacusSamplingNote(const Params& p) {
  const std::int64_t batches = loaderLength(p);
  if (p.n % p.m == 0) {
    return "# Opacus samples at q = 1/len(train_loader) = 1/" + integer(batches) + " = m/n, " + integer(batches) +
           " steps per epoch.\n";
  }
  return "# Opacus samples at q = 1/len(train_loader) = 1/" + integer(batches) + " = " +
         formatNumber(1.0 / static_cast<double>(batches)) + ", not m/n = " + formatNumber(p.q()) +
         ": the epsilon it reports\n# is for that q. The last lines below ask its accountants for the statement's q.\n";
}

std::string opacusSnippet(const Params& p, const std::optional<DpSgdBound>& bound) {
  std::string s = "# Opacus configuration for this run, from a DP Explorer " + std::string(dpxVersion()) +
                  " privacy statement.\n"
                  "# Targets Opacus 1.4 to 1.6 (PrivacyEngine.make_private, the accountants' history list), "
                  "PyTorch 2.\n";
  s += runComment(p, bound);
  s += "# You supply: model, loss_fn and train_dataset (the n records).\n";
  s += "import torch\nfrom torch.utils.data import DataLoader\nfrom opacus import PrivacyEngine\n\n";
  s += "N = " + integer(p.n) + "  # records: len(train_dataset) must equal n\n";
  s += "BATCH_SIZE = " + integer(p.m) + "  # m: the DataLoader's batch size sets Opacus' sampling rate\n";
  s += "NOISE_MULTIPLIER = " + pythonFloat(p.sigma) + "  # sigma\n";
  s += "MAX_GRAD_NORM = " + pythonFloat(p.L) + "  # L\n";
  s += "STEPS = " + integer(p.K) + "  # K\n";
  s += "EPOCHS = " + epochsText(p) + "  # K*m/n, for reference: the loop below counts steps\n";
  s += "TARGET_DELTA = " + pythonFloat(p.delta) + "\n";
  s += "LEARNING_RATE = " + pythonFloat(p.eta) + "  # eta\n\n";
  s += "train_loader = DataLoader(train_dataset, batch_size=BATCH_SIZE)\n";
  s += "optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE, weight_decay=" + pythonFloat(p.lambda) +
       ")  # weight_decay = lambda\n";
  s += "# accountant=\"prv\": numerical composition (Gopi, Lee & Wutschitz 2021), comparable to a PLD bound;\n"
       "# accountant=\"rdp\": Renyi DP of the subsampled Gaussian (Mironov, Talwar & Zhang 2019).\n"
       "privacy_engine = PrivacyEngine(accountant=\"prv\")\n"
       "model, optimizer, train_loader = privacy_engine.make_private(\n"
       "    module=model,\n    optimizer=optimizer,\n    data_loader=train_loader,\n"
       "    noise_multiplier=NOISE_MULTIPLIER,\n    max_grad_norm=MAX_GRAD_NORM,\n    poisson_sampling=True,\n)\n";
  s += opacusSamplingNote(p);
  s += "step = 0\nwhile step < STEPS:\n    for inputs, targets in train_loader:\n        optimizer.zero_grad()\n"
       "        loss_fn(model(inputs), targets).backward()\n        optimizer.step()\n        step += 1\n"
       "        if step == STEPS:\n            break\n"
       "print(\"epsilon:\", privacy_engine.get_epsilon(delta=TARGET_DELTA))\n\n";
  s += "# Opacus' accountants at exactly the statement's q = m/n and K:\n"
       "from opacus.accountants import PRVAccountant, RDPAccountant\n"
       "for accountant in (PRVAccountant(), RDPAccountant()):\n"
       "    accountant.history = [(NOISE_MULTIPLIER, BATCH_SIZE / N, STEPS)]\n"
       "    print(accountant.mechanism(), accountant.get_epsilon(delta=TARGET_DELTA))\n";
  return s;
}

// K steps as Keras fit() calls: whole epochs of n // m steps (the library's default epoch),
// then the remainder.
std::string kerasFitCalls(const Params& p) {
  const std::int64_t perEpoch = p.n / p.m;
  const std::int64_t epochs = p.K / perEpoch;
  const std::int64_t rest = p.K % perEpoch;
  std::string s;
  if (epochs > 0) {
    s += "model.fit(x_train, y_train, epochs=" + integer(epochs) + ", steps_per_epoch=" + integer(perEpoch) + ")  # " +
         integer(epochs * perEpoch) + " steps\n";
  }
  if (rest > 0) {
    s += "model.fit(x_train, y_train, epochs=1, steps_per_epoch=" + integer(rest) + ")  # the last " + integer(rest) +
         " of K = " + integer(p.K) + "\n";
  }
  return s;
}

std::string jaxPrivacySnippet(const Params& p, const std::optional<DpSgdBound>& bound) {
  std::string s = "# JAX-Privacy configuration for this run, from a DP Explorer " + std::string(dpxVersion()) +
                  " privacy statement.\n"
                  "# Targets jax_privacy 2.x (keras_api.DPKerasConfig with poisson_sampling_in_fit), Keras 3 on the "
                  "JAX backend.\n";
  s += runComment(p, bound);
  s += "# You supply: model (a Keras model), loss_fn, and x_train, y_train (the n records).\n";
  s += "import os\nos.environ[\"KERAS_BACKEND\"] = \"jax\"\nimport keras\nfrom jax_privacy import keras_api\n\n";
  s += "params = keras_api.DPKerasConfig(\n";
  if (bound) {
    s += "    epsilon=" + pythonFloat(budget(bound->epsilon)) +
         ",  # budget: JAX-Privacy refuses a noise multiplier whose epsilon exceeds it\n";
  } else {
    s += "    epsilon=float(\"inf\"),  # DP Explorer gives no DP-SGD bound to check the noise against\n";
  }
  s += "    delta=" + pythonFloat(p.delta) + ",\n";
  s += "    clipping_norm=" + pythonFloat(p.L) + ",  # L\n";
  s += "    batch_size=" + integer(p.m) + ",  # m: expected size of the Poisson batches, q = m/n\n";
  s += "    gradient_accumulation_steps=1,\n";
  s += "    train_steps=" + integer(p.K) + ",  # K optimizer steps\n";
  s += "    train_size=" + integer(p.n) + ",  # n: x_train must hold exactly n records\n";
  s += "    poisson_sampling_in_fit=True,\n";
  s += "    noise_multiplier=" + pythonFloat(p.sigma) + ",  # sigma\n";
  s += "    rescale_to_unit_norm=False,  # average the clipped gradients, as the run does\n)\n";
  s += "model = keras_api.make_private(model, params)\n";
  s += "model.compile(optimizer=keras.optimizers.SGD(learning_rate=" + pythonFloat(p.eta) +
       ", weight_decay=" + pythonFloat(p.lambda) + "), loss=loss_fn)\n";
  s += kerasFitCalls(p);
  return s;
}

}  // namespace

std::string_view handoffName(HandoffTarget target) {
  return target == HandoffTarget::kOpacus ? "opacus" : "jax-privacy";
}

std::optional<HandoffTarget> parseHandoff(std::string_view text) {
  if (text == "opacus") return HandoffTarget::kOpacus;
  if (text == "jax-privacy" || text == "jax_privacy") return HandoffTarget::kJaxPrivacy;
  return std::nullopt;
}

std::string pythonFloat(double value) {
  std::string text = roundTripNumber(value);
  if (text.find_first_of(".en") == std::string::npos) text += ".0";
  return text;
}

std::string handoffSnippet(HandoffTarget target, const Params& params, const std::optional<DpSgdBound>& bound) {
  return target == HandoffTarget::kOpacus ? opacusSnippet(params, bound) : jaxPrivacySnippet(params, bound);
}

std::string handoffSnippet(HandoffTarget target, const PrivacyStatement& statement) {
  return handoffSnippet(target, statement.params, statement.dpSgdBound);
}

}  // namespace dpx::core::accounting
