// SPDX-License-Identifier: Apache-2.0
// compare --json and the compare_runs answer, written and described from one list of fields each.
#include "reports/text/compare_text.h"
#include "reports/render/json_shape.h"
#include "reports/render/json_values.h"
#include "reports/render/report_json.h"

namespace ingero::reports {
namespace {

using nlohmann::json;

const JsonShape<CompareRow>& compare_row_shape() {
  using namespace json_schema;
  using R = CompareRow;
  static const JsonShape<R> shape(
      "", {{"name", string(), member(&R::name)},
           {"unit", string("s | ns | count | bytes | share | GB/s | samples/s | µs"), member(&R::unit)},
           {"a", nullable(number()), optional_member(&R::a)},
           {"b", nullable(number()), optional_member(&R::b)},
           {"ratio_b_over_a", nullable(number()), [](const R& r) { return optional_json(r.ratio()); }}});
  return shape;
}

const JsonShape<ComponentRow>& component_shape() {
  using namespace json_schema;
  using C = ComponentRow;
  static const JsonShape<C> shape("", {{"name", string(), [](const C& c) { return json(component_name(c)); }},
                                       {"part_of_wait", boolean(), [](const C& c) { return json(c.part_of_wait()); }},
                                       {"a_s", number(), member(&C::a_s)},
                                       {"b_s", number(), member(&C::b_s)},
                                       {"delta_s", number(), [](const C& c) { return json(c.delta_s()); }},
                                       {"share_of_delta", number(), member(&C::share_of_delta)}});
  return shape;
}

const JsonShape<CompareReport>& compare_shape() {
  using namespace json_schema;
  using R = CompareReport;
  static const JsonShape<R> shape(
      "",
      {constant<R>("schema", "ingero-bench/compare"),
       constant<R>("version", 1),
       {"a", run_header_schema(), [](const R& r) { return to_json(r.a); }},
       {"b", run_header_schema(), [](const R& r) { return to_json(r.b); }},
       {"timings", array_of(compare_row_shape().schema()),
        [](const R& r) { return compare_row_shape().write_all(r.timings); }},
       {"signatures", array_of(compare_row_shape().schema()),
        [](const R& r) { return compare_row_shape().write_all(r.signatures); }},
       {"basis", string("per measured epoch | whole run"), [](const R& r) { return json(basis_text(r.basis)); }},
       {"total_a_s", number(), member(&R::total_a_s)},
       {"total_b_s", number(), member(&R::total_b_s)},
       {"components",
        array_of(component_shape().schema(), "the time difference decomposed: waiting (by cause), compute, other"),
        [](const R& r) { return component_shape().write_all(r.components); }},
       {"explanation", array_of(string()), [](const R& r) { return json(explanation_lines(r)); }}});
  return shape;
}

}  // namespace

json to_json(const CompareReport& report) { return compare_shape().write(report); }
json compare_report_schema() { return compare_shape().schema(); }

}  // namespace ingero::reports
