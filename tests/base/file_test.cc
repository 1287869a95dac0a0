#include "base/file.h"
#include "tests/common/temp_dir.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace sluice {
namespace {

TEST(FileTest, WriteReadMapRoundTrip) {
  testing::TempDir dir_dir("sluice_base_test");
  const std::string dir = dir_dir.path();
  std::string path = JoinPath(dir, "sub/deeper/f.bin");
  ASSERT_TRUE(MakeDirs(JoinPath(dir, "sub/deeper")).ok());
  std::string data("ab\0cd", 5);
  ASSERT_TRUE(WriteFileAtomic(path, data).ok());
  EXPECT_EQ(*ReadFile(path), data);
  EXPECT_EQ(*FileSize(path), 5u);
  auto m = MappedFile::Open(path);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->data(), data);
  MappedFile moved = std::move(*m);
  EXPECT_EQ(moved.data(), data);
}

// Resident kB of the mapping that starts at `addr`, from /proc/self/smaps.
int64_t MappingRssKb(const void* addr) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in_mapping = false;
  while (std::getline(smaps, line)) {
    unsigned long long lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
      in_mapping = lo == reinterpret_cast<uintptr_t>(addr);
    } else if (in_mapping && line.rfind("Rss:", 0) == 0) {
      return std::stoll(line.substr(4));
    }
  }
  return -1;
}

TEST(FileTest, PopulateMapsEveryPageAndKeepsTheBytes) {
  testing::TempDir dir_dir("sluice_base_test");
  const std::string dir = dir_dir.path();
  std::string path = JoinPath(dir, "four_mib");
  std::string data(4 << 20, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7 + i / 4096);
  ASSERT_TRUE(WriteFileAtomic(path, data).ok());
  auto m = MappedFile::Open(path);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(MappingRssKb(m->data().data()), 0) << "nothing read yet";
  if (!m->Populate()) GTEST_SKIP() << "this kernel has no MADV_POPULATE_READ";
  EXPECT_EQ(MappingRssKb(m->data().data()), 4096);
  EXPECT_EQ(m->data(), data);
  EXPECT_TRUE(MappedFile().Populate()) << "an empty map: nothing to do";
}

// Pages of `m` in the page cache among [offset, offset + length).
size_t ResidentPages(const MappedFile& m, uint64_t offset, uint64_t length) {
  std::vector<unsigned char> in_core((length + 4095) / 4096);
  if (::mincore(const_cast<char*>(m.data().data()) + offset, length, in_core.data()) != 0) return 0;
  size_t pages = 0;
  for (unsigned char c : in_core) pages += c & 1;
  return pages;
}

TEST(FileTest, AFileOnDiskIsReadWhereAskedOnly) {
  testing::TempDir dir_dir("sluice_base_test");
  std::string path = JoinPath(dir_dir.path(), "eight_mib");
  std::string data(8 << 20, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 13 + i / 4096);
  ASSERT_TRUE(WriteFileAtomic(path, data).ok());
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ::fdatasync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
  auto m = MappedFile::Open(path);
  ASSERT_TRUE(m.ok());
  if (m->Resident()) GTEST_SKIP() << "the page cache keeps this file (tmpfs?)";
  ASSERT_EQ(::sysconf(_SC_PAGESIZE), 4096);

  // A fault reads its page, not megabytes around it (read-around, the
  // huge-page hint Map gives files of 2 MiB or more).
  m->AdviseRandom();
  const uint64_t at = (4 << 20) + 100;
  EXPECT_EQ(m->data()[at], data[at]);
  EXPECT_LE(ResidentPages(*m, 0, m->size()), 4u);

  // WillNeed reads the range asked for (without waiting for it).
  m->WillNeed(m->data().substr(1 << 20, 256 << 10));
  for (int i = 0; i < 200 && ResidentPages(*m, 1 << 20, 256 << 10) < 64; ++i) ::usleep(10000);
  EXPECT_EQ(ResidentPages(*m, 1 << 20, 256 << 10), 64u);
  EXPECT_EQ(ResidentPages(*m, 6 << 20, 1 << 20), 0u) << "nothing far from what was asked";
  m->WillNeed(std::string_view("not in the map"));  // ignored

  // Populate reads the rest in.
  EXPECT_FALSE(m->Resident());
  if (!m->Populate()) GTEST_SKIP() << "this kernel has no MADV_POPULATE_READ";
  EXPECT_TRUE(m->Resident());
  EXPECT_EQ(m->data(), data);
  EXPECT_TRUE(MappedFile().Resident()) << "an empty map";
}

TEST(FileTest, ErrorsNameThePath) {
  auto r = ReadFile("/nonexistent/sluice/x");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("/nonexistent/sluice/x"), std::string::npos);
  testing::TempDir dir_dir("sluice_base_test");
  const std::string dir = dir_dir.path();
  std::string path = JoinPath(dir, "big");
  ASSERT_TRUE(WriteFileAtomic(path, std::string(100, 'x')).ok());
  auto limited = ReadFile(path, 10);
  EXPECT_EQ(limited.status().code(), StatusCode::kOutOfRange);
}

TEST(FileTest, JoinPath) {
  EXPECT_EQ(JoinPath("a", "b"), "a/b");
  EXPECT_EQ(JoinPath("a/", "b"), "a/b");
  EXPECT_EQ(JoinPath("", "b"), "b");
}

// Into a buffer that held a longer path: overwritten, not appended to.
TEST(FileTest, JoinPathIntoOverwritesItsBuffer) {
  std::string out = "a/much/longer/path/held/before";
  JoinPathInto(&out, "/root", "k/x.parquet");
  EXPECT_EQ(out, "/root/k/x.parquet");
  JoinPathInto(&out, "/", "x");
  EXPECT_EQ(out, "/x");
  JoinPathInto(&out, "", "b");
  EXPECT_EQ(out, "b");
  JoinPathInto(&out, "a/", "b");
  EXPECT_EQ(out, "a/b");
}

TEST(FileTest, ErrnoStatusSaysWhatWhereAndWhy) {
  EXPECT_EQ(ErrnoStatus("cannot open", "/a/b", ENOENT).ToString(),
            "not found: cannot open /a/b: No such file or directory");
  EXPECT_EQ(ErrnoStatus("cannot open", "/a/b", ENOTDIR).code(), StatusCode::kNotFound);
  EXPECT_EQ(ErrnoStatus("cannot open", "/a/b", EACCES).code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(ErrnoStatus("cannot open", "/a/b", EPERM).code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(ErrnoStatus("cannot write", "/a/b", ENOSPC).ToString(),
            "i/o error: cannot write /a/b: No space left on device");
}

TEST(TempNameTest, ATaggedFileAndTheScratchFileAreTheWritersOwn) {
  const TempOwner owner{4242, 987654321};
  const std::string temp = TempPathFor("a/s0", owner, 7);
  EXPECT_EQ(TaggedTempPath(temp, "zip"), "a/.s0.sluice-tmp.4242.987654321.7.zip");
  EXPECT_EQ(ScratchPath(temp), "a/.s0.sluice-tmp.4242.987654321.7.scratch");
  std::optional<TempName> t = ParseTempName(".s0.sluice-tmp.4242.987654321.7.scratch");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->owner, owner);
  EXPECT_EQ(t->seq, 7u);
}

TEST(TempNameTest, RoundTripsItsOwnerAndIsRecognized) {
  const TempOwner owner{4242, 987654321};
  EXPECT_EQ(TempPathFor("a/b/shard.00001.mds", owner, 7),
            "a/b/.shard.00001.mds.sluice-tmp.4242.987654321.7");
  EXPECT_EQ(TempPathFor("index.json", owner, 1), ".index.json.sluice-tmp.4242.987654321.1");
  for (const std::string& name : {std::string(".shard.00001.mds.sluice-tmp.4242.987654321.7"),
                                  std::string(".s.sluice-tmp.4242.987654321.7.scratch")}) {
    std::optional<TempName> t = ParseTempName(name);
    ASSERT_TRUE(t.has_value()) << name;
    EXPECT_EQ(t->owner, owner);
    EXPECT_EQ(t->seq, 7u);
  }
  // A temporary of a temporary is the outer writer's.
  std::optional<TempName> outer =
      ParseTempName(".x.sluice-tmp.1.2.3.sluice-tmp.4.5.6");
  ASSERT_TRUE(outer.has_value());
  EXPECT_EQ(outer->owner, (TempOwner{4, 5}));
  for (const char* not_one : {"shard.mds", "s1.tmp.4242.7", ".s1.tmp.4242.7",
                              "x.sluice-tmp.1.2.3", ".sluice-tmp.1.2.3", ".x.sluice-tmp.1.2",
                              ".x.sluice-tmp.1.2.3.", ".x.sluice-tmp.1.2.3.Tag",
                              ".x.sluice-tmp.1.2.3.tag.more", ".x.sluice-tmp.a.2.3",
                              ".x.sluice-tmp.1.2.99999999999", "d/.x.sluice-tmp.1.2.3"}) {
    EXPECT_FALSE(ParseTempName(not_one).has_value()) << not_one;
  }
  // Long names are cut so the temporary stays within NAME_MAX.
  std::string temp = TempPathFor(std::string(255, 'n'), owner, 1);
  EXPECT_LE(temp.size(), 255u);
  EXPECT_TRUE(ParseTempName(temp).has_value());
}

TEST(TempNameTest, OwnersAreThisProcessUntilGone) {
  const TempOwner me = ThisProcessTempOwner();
  EXPECT_EQ(me.pid, static_cast<uint32_t>(::getpid()));
  ASSERT_NE(me.start, 0u) << "/proc/self/stat unreadable";
  EXPECT_FALSE(TempOwnerGone(me));
  EXPECT_TRUE(TempOwnerGone({me.pid, me.start + 1})) << "a reused pid is another process";
  EXPECT_FALSE(TempOwnerGone({me.pid, 0})) << "unknown start: the live pid is the owner";
  pid_t child = ::fork();
  if (child == 0) _exit(0);
  // Ended, not yet reaped (a zombie): gone, with or without its start time.
  siginfo_t info{};
  ASSERT_EQ(::waitid(P_PID, id_t(child), &info, WEXITED | WNOWAIT), 0);
  EXPECT_TRUE(TempOwnerGone({static_cast<uint32_t>(child), 0}));
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  EXPECT_TRUE(TempOwnerGone({static_cast<uint32_t>(child), 0}));
  EXPECT_TRUE(IsTempOfThisProcess("x/" + TempPathFor("f")));
  EXPECT_FALSE(IsTempOfThisProcess(TempPathFor("f", {me.pid, me.start + 1}, 1)));
  EXPECT_NE(NextTempSeq(), NextTempSeq());
}

TEST(TempFileTest, CommitRenamesAndDroppingDeletes) {
  testing::TempDir dir_dir("sluice_base_test");
  const std::string dir = dir_dir.path();
  const std::string final_path = JoinPath(dir, "f.bin");
  {
    auto t = TempFile::Create(final_path);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(t->path().rfind(dir + "/.f.bin.sluice-tmp.", 0), 0u) << t->path();
    EXPECT_TRUE(IsTempOfThisProcess(t->path()));
    ASSERT_EQ(::write(t->fd(), "abc", 3), 3);
    EXPECT_FALSE(FileExists(final_path));
    std::string temp = t->path();
    ASSERT_TRUE(t->Commit().ok());
    EXPECT_FALSE(FileExists(temp));
  }
  EXPECT_EQ(*ReadFile(final_path), "abc");
  std::string dropped;
  {
    auto t = TempFile::Create(final_path);
    ASSERT_TRUE(t.ok());
    dropped = t->path();
    EXPECT_TRUE(FileExists(dropped));
  }
  EXPECT_FALSE(FileExists(dropped));
  EXPECT_EQ(*ReadFile(final_path), "abc");
  // A temporary of this process is written in place: one file, no rename.
  const std::string named = TempPathFor(JoinPath(dir, "g.bin"));
  {
    auto t = TempFile::Create(named);
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(t->path(), named);
    ASSERT_EQ(::write(t->fd(), "xy", 2), 2);
    ASSERT_TRUE(t->Commit().ok());
  }
  EXPECT_EQ(*ReadFile(named), "xy");
  ASSERT_TRUE(WriteFileAtomic(named, "in place").ok());
  EXPECT_EQ(*ReadFile(named), "in place");
  std::filesystem::remove_all(dir);
  // Its folder must exist.
  auto missing = TempFile::Create(JoinPath(dir, "f.bin"));
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

TEST(TempFileTest, WriteFileAtomicNamesItsTemporaryByTheScheme) {
  testing::TempDir dir_dir("sluice_base_test");
  const std::string dir = dir_dir.path();
  const std::string target = JoinPath(dir, "taken");
  ASSERT_TRUE(MakeDirs(JoinPath(target, "inside")).ok());  // the rename must fail
  Status st = WriteFileAtomic(target, "data");
  ASSERT_FALSE(st.ok());
  const std::string& m = st.message();
  const std::string head = "cannot rename ";
  ASSERT_EQ(m.rfind(head, 0), 0u) << m;
  const std::string temp = m.substr(head.size(), m.find(" onto ") - head.size());
  EXPECT_EQ(temp.rfind(dir + "/.taken.sluice-tmp.", 0), 0u) << m;
  std::optional<TempName> t = ParseTempName(temp.substr(dir.size() + 1));
  ASSERT_TRUE(t.has_value()) << temp;
  EXPECT_EQ(t->owner, ThisProcessTempOwner());
  EXPECT_FALSE(FileExists(temp)) << "a failed write leaves no temporary";
}

// Files are created 0666 and folders 0777, masked by the umask.
TEST(FileTest, NewFilesAndFoldersHonourTheUmask) {
  testing::TempDir dir_dir("sluice_base_test");
  const std::string dir = dir_dir.path();
  auto mode = [](const std::string& p) {
    struct stat st;
    return ::stat(p.c_str(), &st) == 0 ? (st.st_mode & 07777) : 01000000u;
  };
  const mode_t old = ::umask(022);
  ASSERT_TRUE(WriteFileAtomic(JoinPath(dir, "a"), "x").ok());
  ASSERT_TRUE(MakeDirs(JoinPath(dir, "d1/e")).ok());
  ::umask(027);
  ASSERT_TRUE(WriteFileAtomic(JoinPath(dir, "b"), "x").ok());
  ASSERT_TRUE(MakeDirs(JoinPath(dir, "d2")).ok());
  ::umask(old);
  EXPECT_EQ(mode(JoinPath(dir, "a")), 0644u);
  EXPECT_EQ(mode(JoinPath(dir, "d1/e")), 0755u);
  EXPECT_EQ(mode(JoinPath(dir, "b")), 0640u);
  EXPECT_EQ(mode(JoinPath(dir, "d2")), 0750u);
}

TEST(ConfinedDirTest, NeverGoesThroughALink) {
  testing::TempDir dir_dir("sluice_base_test");
  const std::string dir = dir_dir.path();
  const std::string root = JoinPath(dir, "root");
  const std::string outside = JoinPath(dir, "outside");
  ASSERT_TRUE(MakeDirs(root).ok());
  ASSERT_TRUE(MakeDirs(outside).ok());
  ASSERT_TRUE(WriteFileAtomic(JoinPath(outside, "f"), "out").ok());
  ASSERT_EQ(::symlink(outside.c_str(), JoinPath(root, "sub").c_str()), 0);
  ASSERT_EQ(::symlink(JoinPath(outside, "f").c_str(), JoinPath(root, "lf").c_str()), 0);
  auto d = ConfinedDir::Open(root);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  const std::string refused = "invalid argument: " + root + "/sub is a symbolic link: nothing "
                              "beneath " + root + " is reached through one";
  EXPECT_EQ(d->OpenFolder("sub/deeper", true).status().ToString(), refused);
  EXPECT_EQ(d->Stat("sub/f").status().ToString(), refused);
  EXPECT_EQ(d->Remove("sub/f").ToString(), refused);
  EXPECT_EQ(d->OpenFile("sub/f", OpenMode::kRead).status().ToString(), refused);
  EXPECT_EQ(d->OpenFile("lf", OpenMode::kRead).status().ToString(),
            "invalid argument: " + root + "/lf is a symbolic link: nothing beneath " + root +
                " is reached through one");
  EXPECT_EQ(d->Rename("lf", "sub/g").ToString(), refused);
  EXPECT_EQ(d->OpenFolder("a/../../x", true).status().code(), StatusCode::kInvalidArgument);
  auto link = d->Stat("lf");
  ASSERT_TRUE(link.ok());
  EXPECT_TRUE(S_ISLNK(link->st_mode));
  auto followed = d->Stat("sub/f", /*follow_links=*/true);
  ASSERT_TRUE(followed.ok());
  EXPECT_EQ(followed->st_size, 3);
  // Real folders work: created, statted, renamed into, deleted from.
  ASSERT_TRUE(d->OpenFolder("a/b", true).ok());
  ASSERT_TRUE(WriteFileAtomic(JoinPath(root, "a/b/x"), "12345").ok());
  EXPECT_EQ(d->Stat("a/b/x")->st_size, 5);
  EXPECT_EQ(d->Stat("a/c/x").status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(d->Rename("a/b/x", "a/y").ok());
  EXPECT_TRUE(d->Remove("a/y").ok());
  EXPECT_TRUE(d->Remove("a/y").ok()) << "already gone is fine";
  EXPECT_TRUE(d->Remove("nowhere/y").ok());
  EXPECT_TRUE(d->Remove("lf").ok()) << "deletes the link itself";
  EXPECT_EQ(*ReadFile(JoinPath(outside, "f")), "out");
}

TEST(ConfinedDirTest, SweepDeletesOnlyTemporariesOfGoneOwners) {
  testing::TempDir dir_dir("sluice_base_test");
  const std::string dir = dir_dir.path();
  const TempOwner me = ThisProcessTempOwner();
  const TempOwner gone{me.pid, me.start + 1};
  const std::string a = TempPathFor("a", gone, 1);
  const std::string b = ScratchPath(TempPathFor("b", gone, 2));
  const std::string mine = TempPathFor("c", me, 3);
  for (const std::string& f : {a, b, mine, std::string("a.tmp.1.2"), std::string("a")}) {
    ASSERT_TRUE(WriteFileAtomic(JoinPath(dir, f), "x").ok());
  }
  auto d = ConfinedDir::Open(dir);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->SweepDeadTemps(""), 2u);
  EXPECT_FALSE(FileExists(JoinPath(dir, a)));
  EXPECT_FALSE(FileExists(JoinPath(dir, b)));
  EXPECT_TRUE(FileExists(JoinPath(dir, mine)));
  EXPECT_TRUE(FileExists(JoinPath(dir, "a.tmp.1.2")));
  EXPECT_EQ(d->SweepDeadTemps("missing"), 0u);
}

}  // namespace
}  // namespace sluice
