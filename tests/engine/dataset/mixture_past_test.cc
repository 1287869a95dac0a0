// A schedule changed at a resume, as the order record sees it: a change of
// schedule alone asks for adapt "schedule" (exact text), and the past the
// resumed run keeps (ResumedMixturePast) grows by one schedule per change,
// carried in the record's digested "mixture_past" part.
#include <gtest/gtest.h>

#include "engine/dataset/order_record.h"

namespace sluice {
namespace {

using planner::MixtureInterpolation;

OrderRecord Scheduled(planner::MixtureSchedule schedule, std::vector<planner::PlanConfig::MixtureChange> past = {}) {
  DatasetOptions o;
  o.plan.batch_size = 2;
  o.plan.epoch_size = 40;
  o.plan.mixture = std::move(schedule);
  o.plan.mixture_past = std::move(past);
  OrderRecord r;
  r.sampling = SamplingOrderPart(o, 9176, 1);
  r.worlds = {WorldShape{1, 1}};
  r.mixture_past = MixturePastOrderPart(o.plan, 0);
  return r;
}

const planner::MixtureSchedule kA{{{0, {1, 1}}}, MixtureInterpolation::kStep};
const planner::MixtureSchedule kB{{{0, {1, 0}}, {20, {0, 1}}}, MixtureInterpolation::kLinear};
const planner::MixtureSchedule kC{{{0, {0, 1}}}, MixtureInterpolation::kStep};

TEST(MixturePast, AChangeOfScheduleAsksForAdaptSchedule) {
  const OrderRecord saved = Scheduled(kA), now = Scheduled(kB);
  const std::string diff =
      "resume state does not match this dataset: sampling mixture changed: saved [[0, [1.0, 1.0]]], now "
      "[[0, [1.0, 0.0]], [20, [0.0, 1.0]]]; sampling mixture_interpolation changed: saved \"step\", now "
      "\"linear\"";
  EXPECT_EQ(CompareOrder(saved, now, {}, {}).message(), diff + " (to resume anyway, adapt \"schedule\")");
  EXPECT_TRUE(CompareOrder(saved, now, {.schedule = true}, {}).ok());
  EXPECT_TRUE(CompareOrder(saved, now, {.sampling = true}, {}).ok());
  // Another batch size beside it: both parts named.
  OrderRecord other = now;
  for (auto& [k, v] : other.sampling)
    if (k == "batch_size") v = JsonValue{int64_t{4}};
  EXPECT_EQ(CompareOrder(saved, other, {}, {}).message(),
            "resume state does not match this dataset: sampling batch_size changed: saved 2, now 4; sampling "
            "mixture changed: saved [[0, [1.0, 1.0]]], now [[0, [1.0, 0.0]], [20, [0.0, 1.0]]]; sampling "
            "mixture_interpolation changed: saved \"step\", now \"linear\" (to resume anyway, adapt \"sampling\", "
            "\"schedule\")");
  EXPECT_EQ(CompareOrder(saved, other, {.schedule = true}, {}).message(),
            "resume state does not match this dataset: sampling batch_size changed: saved 2, now 4 (to resume "
            "anyway, adapt \"sampling\")");
  // From no schedule to one is a change of sampling (no past to keep).
  DatasetOptions plain;
  plain.plan.batch_size = 2;
  plain.plan.epoch_size = 40;
  OrderRecord unscheduled = saved;
  unscheduled.sampling = SamplingOrderPart(plain, 9176, 1);
  EXPECT_EQ(CompareOrder(unscheduled, now, {.schedule = true}, {}).message(),
            "resume state does not match this dataset: sampling mixture changed: saved absent, now [[0, [1.0, "
            "0.0]], [20, [0.0, 1.0]]]; sampling mixture_interpolation changed: saved absent, now \"linear\"; "
            "sampling mixture_rule changed: saved absent, now \"tijdeman\" (to resume anyway, adapt \"sampling\")");
}

// The rule a schedule draws by is recorded and adopted by a resume, as the
// seed is: a state saved under the largest-deficit rule (before Tijdeman's)
// carries no "mixture_rule" and keeps its digest and its order.
TEST(MixturePast, TheRuleIsRecordedAndAResumeKeepsTheSavedOne) {
  planner::MixtureSchedule deficit = kA;
  deficit.rule = planner::MixtureRule::kDeficit;
  const OrderRecord old = Scheduled(deficit), now = Scheduled(kA);
  EXPECT_EQ(JsonMember(JsonValue{old.sampling}, "mixture_rule"), nullptr);
  ASSERT_NE(JsonMember(JsonValue{now.sampling}, "mixture_rule"), nullptr);
  EXPECT_EQ(std::get<std::string>(JsonMember(JsonValue{now.sampling}, "mixture_rule")->v), "tijdeman");
  EXPECT_EQ(**RecordedMixtureRule(old), planner::MixtureRule::kDeficit);
  EXPECT_EQ(**RecordedMixtureRule(now), planner::MixtureRule::kTijdeman);
  DatasetOptions plain;
  OrderRecord unscheduled;
  unscheduled.sampling = SamplingOrderPart(plain, 9176, 1);
  EXPECT_FALSE(RecordedMixtureRule(unscheduled)->has_value());
  // Compared as recorded, the rules differ by name...
  EXPECT_EQ(CompareOrder(old, now, {}, {}).message(),
            "resume state does not match this dataset: sampling mixture_rule changed: saved absent, now "
            "\"tijdeman\" (to resume anyway, adapt \"sampling\")");
  // ...but a resume records its state's rule (StreamingDataset::LoadState).
  OrderRecord adopted = now;
  SetRecordedMixtureRule(&adopted.sampling, **RecordedMixtureRule(old));
  EXPECT_TRUE(CompareOrder(old, adopted, {}, {}).ok());
  EXPECT_EQ(*DumpPyJson(OrderRecordJson(adopted), true), *DumpPyJson(OrderRecordJson(old), true));
  // A rule this Sluice does not know is refused by name.
  OrderRecord unknown = now;
  for (auto& [k, v] : unknown.sampling)
    if (k == "mixture_rule") v = JsonValue{std::string("fair")};
  EXPECT_EQ(RecordedMixtureRule(unknown).status().message(),
            "resume state: sluice_order: 'parts.sampling.mixture_rule' must be 'tijdeman' or 'deficit' (the "
            "rules this Sluice draws schedules by)");
}

TEST(MixturePast, EachChangeAddsTheReplacedSchedule) {
  // A to B at 6.
  auto once = ResumedMixturePast(Scheduled(kA), Scheduled(kB), 0, 6);
  ASSERT_TRUE(once.ok()) << once.status().ToString();
  ASSERT_EQ(once->size(), 1u);
  EXPECT_EQ((*once)[0].epoch, 0);
  EXPECT_EQ((*once)[0].until, 6);
  EXPECT_EQ((*once)[0].schedule.points.size(), 1u);
  EXPECT_EQ((*once)[0].schedule.points[0].weights, (std::vector<double>{1, 1}));
  // The run on B saves at 10 with that past; C takes over there.
  const OrderRecord on_b = Scheduled(kB, *once);
  auto twice = ResumedMixturePast(on_b, Scheduled(kC), 0, 10);
  ASSERT_TRUE(twice.ok());
  ASSERT_EQ(twice->size(), 2u);
  EXPECT_EQ((*twice)[1].until, 10);
  EXPECT_EQ((*twice)[1].schedule.interpolation, MixtureInterpolation::kLinear);
  EXPECT_EQ((*twice)[1].schedule.points[1].at, 20);
  // The same schedule resumed: the past alone; a change where the last
  // one was (B decided nothing) adds nothing; a record of another epoch
  // keeps nothing of this one's.
  EXPECT_EQ(ResumedMixturePast(on_b, Scheduled(kB), 0, 10)->size(), 1u);
  EXPECT_EQ(ResumedMixturePast(on_b, Scheduled(kC), 0, 6)->size(), 1u);
  EXPECT_EQ(ResumedMixturePast(on_b, Scheduled(kB), 1, 0)->size(), 0u);
}

TEST(MixturePast, TheRecordCarriesItInItsDigest) {
  auto past = ResumedMixturePast(Scheduled(kA), Scheduled(kB), 0, 6);
  ASSERT_TRUE(past.ok());
  const OrderRecord r = Scheduled(kB, *past);
  const JsonValue json = OrderRecordJson(r);
  auto text = DumpPyJson(*JsonMember(*JsonMember(json, "parts"), "mixture_past"), false);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text,
            "[{\"epoch\": 0, \"until\": 6, \"mixture\": [[0, [1.0, 1.0]]], \"mixture_interpolation\": \"step\"}]");
  auto back = ParseOrderRecord(json);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  auto again = ResumedMixturePast(*back, Scheduled(kB), 0, 8);
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->size(), 1u);
  EXPECT_EQ((*again)[0].until, 6);
  // Without a past the part is absent (older records keep their digest).
  EXPECT_EQ(JsonMember(*JsonMember(OrderRecordJson(Scheduled(kA)), "parts"), "mixture_past"), nullptr);
  // Edited, the digest refuses it.
  JsonValue edited = json;
  auto& parts = std::get<JsonValue::Object>(std::get<JsonValue::Object>(edited.v)[2].second.v);
  for (auto& [k, v] : parts)
    if (k == "mixture_past") std::get<JsonValue::Array>(v.v).clear();
  auto refused = ParseOrderRecord(edited);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("does not match its parts"), std::string::npos);
}

}  // namespace
}  // namespace sluice
