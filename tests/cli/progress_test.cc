// The progress bar of build, calibrate and sweep: its text on a terminal and in a log, and how
// often it prints. The clock is a variable the test moves: nothing sleeps, nothing reads real time.
#include "progress.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

namespace kiln::cli {
namespace progress_test {

// Counted on a copy: os.str() returns a new string on every call.
long count_of(const std::string& s, char c) { return std::count(s.begin(), s.end(), c); }

struct FakeProgressClock {
  double now = 100;
  Progress::Clock fn() {
    return [this] { return now; };
  }
};

TEST(ProgressFormat, Durations) {
  EXPECT_EQ(Progress::format_duration(0.04), "0.0s");
  EXPECT_EQ(Progress::format_duration(12.34), "12.3s");
  EXPECT_EQ(Progress::format_duration(245), "4m05s");
  EXPECT_EQ(Progress::format_duration(3725), "1h02m");
  EXPECT_EQ(Progress::format_duration(-1), "--");
}

TEST(ProgressFormat, TerminalLineHasBarCountPercentElapsedAndEta) {
  std::ostringstream os;
  FakeProgressClock clock;
  Progress p({&os, true}, "build", 4, clock.fn());
  EXPECT_EQ(p.line(1, 2.0, "conv1"),
            "[build] [######..................] 1/4 (25%), elapsed 2.0s, ETA 6.0s conv1");
  EXPECT_EQ(p.line(0, 0.5, ""),
            "[build] [........................] 0/4 (0%), elapsed 0.5s, ETA --");
  EXPECT_EQ(p.line(4, 8.0, ""), "[build] [########################] 4/4 (100%), elapsed 8.0s");
  const std::string long_name(60, 'x');
  EXPECT_NE(p.line(2, 1, long_name).find(std::string(37, 'x') + "..."), std::string::npos);
}

TEST(ProgressFormat, LogLineHasNoBarAndKeepsTheWholeDetail) {
  std::ostringstream os;
  FakeProgressClock clock;
  Progress p({&os, false}, "calibrate", 10, clock.fn());
  const std::string long_name(60, 'y');
  EXPECT_EQ(p.line(5, 10.0, long_name),
            "[calibrate] 5/10 (50%), elapsed 10.0s, ETA 10.0s " + long_name);
}

TEST(ProgressThrottle, TerminalRedrawsInPlaceAtMostEveryTenthOfASecond) {
  std::ostringstream os;
  FakeProgressClock clock;
  Progress p({&os, true}, "build", 3, clock.fn());
  p.update(1, "a");
  clock.now += 0.05;
  p.update(2, "b");  // too soon: skipped
  EXPECT_EQ(os.str(), "\r[build] [########................] 1/3 (33%), elapsed 0.0s, ETA 0.0s a");
  clock.now += 0.06;
  p.update(2, "b");
  EXPECT_EQ(count_of(os.str(), '\r'), 2);
  EXPECT_EQ(os.str().find('\n'), std::string::npos);
  p.update(3);  // the last step always shows, and ends the line
  EXPECT_EQ(os.str().back(), '\n');
  const std::string before = os.str();
  p.update(3);  // finished: nothing more
  EXPECT_EQ(os.str(), before);
}

TEST(ProgressThrottle, ShorterRedrawsBlankWhatTheLongerLineLeft) {
  std::ostringstream os;
  FakeProgressClock clock;
  Progress p({&os, true}, "sweep", 2, clock.fn());
  p.update(0, "a long description");
  clock.now += 1;
  p.update(1, "x");
  const std::string s = os.str();
  const size_t second = s.rfind('\r');
  EXPECT_EQ(s.size() - second - 1, second - 1);  // padded to the first line's width
}

TEST(ProgressThrottle, LogPrintsEveryFiveSecondsAndTheEnd) {
  std::ostringstream os;
  FakeProgressClock clock;
  Progress p({&os, false}, "calibrate", 100, clock.fn());
  for (int i = 1; i <= 100; ++i) {
    clock.now += 0.25;  // 25 s in all, in steps exact in binary
    p.update(static_cast<size_t>(i));
  }
  const std::string s = os.str();
  EXPECT_EQ(s.find('\r'), std::string::npos);
  // Lines at 5, 10, 15, 20 and 25 s (the last one is also the end).
  EXPECT_EQ(std::count(s.begin(), s.end(), '\n'), 5) << s;
  EXPECT_NE(s.find("[calibrate] 20/100 (20%), elapsed 5.0s, ETA 20.0s\n"), std::string::npos) << s;
  EXPECT_NE(s.find("[calibrate] 100/100 (100%), elapsed 25.0s\n"), std::string::npos) << s;
}

TEST(ProgressThrottle, ShortWorkInALogPrintsOnlyTheLastLine) {
  std::ostringstream os;
  FakeProgressClock clock;
  Progress p({&os, false}, "build", 3, clock.fn());
  for (size_t i = 1; i <= 3; ++i) p.update(i);
  EXPECT_EQ(os.str(), "[build] 3/3 (100%), elapsed 0.0s\n");
}

TEST(ProgressThrottle, ClearErasesTheBarAndTheNextUpdateRedraws) {
  std::ostringstream os;
  FakeProgressClock clock;
  {
    Progress p({&os, true}, "sweep", 2, clock.fn());
    p.update(0);
    const size_t width = os.str().size() - 1;
    p.clear();
    EXPECT_EQ(os.str().substr(width + 1), "\r" + std::string(width, ' ') + "\r");
    p.update(1);  // at once, though no time passed
    EXPECT_EQ(count_of(os.str(), '\r'), 4);
  }
  EXPECT_EQ(os.str().back(), '\n');  // an unfinished bar is ended when it goes away
}

TEST(ProgressThrottle, NoTargetOrNoWorkPrintsNothing) {
  FakeProgressClock clock;
  Progress none({}, "build", 5, clock.fn());
  none.update(5);
  std::ostringstream os;
  {
    Progress empty({&os, true}, "build", 0, clock.fn());
    empty.update(0);
  }
  EXPECT_EQ(os.str(), "");
}

}  // namespace progress_test
}  // namespace kiln::cli
