// `tbd list [WORKLOAD]`: the workloads, or one workload's settings.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "tbd/output/summary.h"
#include "tbd/workloads/registry.h"

namespace tbd::cli {
namespace {

nlohmann::json parts_of(const Workload& w, const Settings& settings) {
  nlohmann::json parts = nlohmann::json::object();
  for (const auto& [kind, n] : w.parameter_parts(settings)) parts[kind] = n;
  return parts;
}

// Each value of each choice setting that changes the model, with its full-scale
// parameter count (llama's sizes, dlrm's configurations, resnet50's depths).
nlohmann::json configurations(const Workload& w) {
  const auto& i = w.info();
  const int64_t base = w.full_scale_parameters(Settings(i.settings, {}, i.name));
  nlohmann::json out = nlohmann::json::array();
  for (const auto& spec : i.settings) {
    if (spec.kind != SettingSpec::Kind::Choice) continue;
    nlohmann::json rows = nlohmann::json::array();
    bool differs = false;
    for (const auto& value : spec.choices) {
      const Settings settings(i.settings, {{spec.key, value}}, i.name);
      const int64_t n = w.full_scale_parameters(settings);
      differs = differs || n != base;
      rows.push_back({{"setting", spec.key}, {"value", value}, {"parameters", n}, {"parts", parts_of(w, settings)}});
    }
    if (differs) out.insert(out.end(), rows.begin(), rows.end());
  }
  return out;
}

nlohmann::json describe(const Workload& w, bool with_configurations) {
  const auto& i = w.info();
  nlohmann::json settings = nlohmann::json::array();
  for (const auto& s : i.settings)
    settings.push_back({{"key", s.key}, {"default", s.default_value}, {"description", s.description}});
  const Settings defaults(i.settings, {}, i.name);
  nlohmann::json d = {
      {"name", i.name},
      {"domain", i.domain},
      {"model", i.model},
      {"dataset", i.dataset},
      {"sample_unit", i.sample_unit},
      {"batch_unit", batch_unit_of(i)},
      {"default_batch", i.default_batch},
      {"lr_reference_batch", i.lr_reference_batch > 0 ? nlohmann::json(i.lr_reference_batch) : nlohmann::json()},
      {"parameters", w.full_scale_parameters(defaults)},
      {"parameter_parts", parts_of(w, defaults)},
      {"settings", settings}};
  if (with_configurations) d["configurations"] = configurations(w);
  return d;
}

std::string parts_text(const nlohmann::json& parts) {
  std::string text;
  for (const auto& [kind, n] : parts.items())
    text += (text.empty() ? "" : ", ") + with_thousands(n.get<long long>()) + " " + kind;
  return text.empty() ? "" : " (" + text + ")";
}

}  // namespace

Command add_list_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("list",
                                 "List the workloads: domain, sample unit, default batch, "
                                 "full-scale parameter count, model and dataset");
  struct Args {
    bool json = false;
    std::string workload;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("workload", args->workload, "Show one workload with its --set settings");
  cmd->add_flag("--json", args->json, "Print JSON instead of a table");
  return {cmd, [args]() {
            nlohmann::json all = nlohmann::json::array();
            if (!args->workload.empty()) {
              all.push_back(describe(*create_workload(args->workload), true));
            } else {
              for (const auto& e : workload_registry()) all.push_back(describe(*e.create(), false));
            }
            if (args->json) {
              std::cout << (args->workload.empty() ? all : all[0]).dump(2) << "\n";
              return 0;
            }
            if (!args->workload.empty()) {
              const auto& w = all[0];
              std::cout << fmt::format(
                  "{} ({})\n  model       {}\n  dataset     {}\n  unit        {}\n"
                  "  batch       {} {} (default)\n  parameters  {} (full scale){}\n",
                  w["name"].get<std::string>(), w["domain"].get<std::string>(), w["model"].get<std::string>(),
                  w["dataset"].get<std::string>(), w["sample_unit"].get<std::string>(),
                  w["default_batch"].get<long long>(), w["batch_unit"].get<std::string>(),
                  with_thousands(w["parameters"].get<long long>()), parts_text(w["parameter_parts"]));
              for (const auto& c : w["configurations"])
                std::cout << fmt::format("    {}={:<10} {:>15}{}\n", c["setting"].get<std::string>(),
                                         c["value"].get<std::string>(),
                                         with_thousands(c["parameters"].get<long long>()), parts_text(c["parts"]));
              if (w["lr_reference_batch"].is_number())
                std::cout << fmt::format(
                    "  lr scaling  linear: lr is the rate at batch {0}; batch B trains at lr * B / {0}\n",
                    w["lr_reference_batch"].get<double>());
              std::cout << "  settings (--set key=value):\n";
              for (const auto& s : w["settings"])
                std::cout << fmt::format("    {:<14} default {:<8} {}\n", s["key"].get<std::string>(),
                                         s["default"].get<std::string>(), s["description"].get<std::string>());
              return 0;
            }
            std::cout << fmt::format("{:<12} {:<27} {:<10} {:>6} {:>13}  {}\n", "workload", "domain", "unit", "batch",
                                     "parameters", "model");
            for (const auto& w : all)
              std::cout << fmt::format("{:<12} {:<27} {:<10} {:>6} {:>13}  {}\n", w["name"].get<std::string>(),
                                       w["domain"].get<std::string>(), w["sample_unit"].get<std::string>(),
                                       w["default_batch"].get<long long>(),
                                       with_thousands(w["parameters"].get<long long>()), w["model"].get<std::string>());
            std::cout << "\n`tbd list WORKLOAD` shows its dataset and --set settings.\n";
            return 0;
          }};
}

}  // namespace tbd::cli
