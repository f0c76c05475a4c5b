// Every registered accountant's AccountantInfo is complete and says what its code does: the
// registry, `dpx --json` and the GUI read nothing else about an accountant, so a gap here is a
// gap in all three.
#include <QTest>
#include <cctype>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "accounting/accountant.h"
#include "accounting/registry.h"

using namespace dpx::core;
using namespace dpx::core::accounting;

namespace {

// The keys of native() and of epsilon()'s computation-specific values (pld's bracket and grid),
// which the CLI merges into "native".
std::set<std::string> nativeKeysOf(const Accountant& a, const Params& p) {
  std::set<std::string> keys;
  if (Result<std::vector<NativeValue>> native = a.native(p)) {
    for (const NativeValue& v : *native) keys.insert(v.key);
  }
  EpsilonOptions options;
  options.exact.discretisation = 1e-2;  // pld: a coarse grid is enough to name its keys
  if (Result<EpsilonResult> e = a.epsilon(p, options)) {
    for (const NativeValue& v : e->native) keys.insert(v.key);
  }
  return keys;
}

// The product cites papers, never the project's own source files or specification.
bool citesInternalSources(const std::string& text) {
  return text.find("seed 0") != std::string::npos || text.find("Seed 0") != std::string::npos ||
         text.find("SPEC") != std::string::npos;
}

std::vector<std::string> allText(const AccountantInfo& info) {
  std::vector<std::string> text{info.id, info.name, info.citation};
  text.insert(text.end(), info.assumptions.statements.begin(), info.assumptions.statements.end());
  for (const Variant& v : info.variants) {
    text.push_back(v.label);
    text.push_back(v.tooltip);
  }
  return text;
}

}  // namespace

class TestAccountantInfo : public QObject {
  Q_OBJECT

 private:
  // One row per registered accountant, named by its id.
  static void everyAccountant_data() {
    QTest::addColumn<QString>("id");
    for (const Accountant* a : allAccountants()) QTest::newRow(a->id().data()) << QString::fromUtf8(a->id().data());
  }

 private Q_SLOTS:
  void infoIsComplete_data() { everyAccountant_data(); }
  void infoIsComplete() {
    QFETCH(QString, id);
    const Accountant* a = findAccountant(id.toStdString());
    QVERIFY(a);
    const AccountantInfo& info = a->info();
    QCOMPARE(QString::fromStdString(info.id), id);
    QVERIFY(!info.name.empty());
    QVERIFY(!info.citation.empty());
    QVERIFY2(!info.assumptions.statements.empty(), "assumptions are stated in words");
    for (const std::string& s : info.assumptions.statements) QVERIFY(!s.empty());
    QVERIFY2(!info.nativeKeys.empty(), "the CLI promises at least one native key");
    // The accessors are the info.
    QCOMPARE(a->name(), std::string_view(info.name));
    QCOMPARE(a->citation(), std::string_view(info.citation));
    QCOMPARE(a->boundKind(), info.bound);
    QCOMPARE(a->isAnalytic(), info.isAnalytic);
    QCOMPARE(a->noiseSetBySigma(), info.noiseSetBySigma);
  }

  // A citation names authors and a year: at least one four-digit year in it.
  void citationNamesAYear_data() { everyAccountant_data(); }
  void citationNamesAYear() {
    QFETCH(QString, id);
    const std::string& citation = findAccountant(id.toStdString())->info().citation;
    bool year = false;
    for (std::size_t i = 0; i + 4 <= citation.size(); ++i) {
      const std::string four = citation.substr(i, 4);
      if ((four.rfind("19", 0) == 0 || four.rfind("20", 0) == 0) && std::isdigit(static_cast<unsigned char>(four[2])) &&
          std::isdigit(static_cast<unsigned char>(four[3]))) {
        year = true;
      }
    }
    QVERIFY2(year, citation.c_str());
  }

  void noStringCitesInternalSources_data() { everyAccountant_data(); }
  void noStringCitesInternalSources() {
    QFETCH(QString, id);
    const Accountant& a = *findAccountant(id.toStdString());
    for (const std::string& text : allText(a.info())) QVERIFY2(!citesInternalSources(text), text.c_str());
    // Violation reasons too, for runs that break each kind of assumption.
    Params broken;
    broken.lambda = 0.0;
    broken.eta = 5.0;
    broken.K = 10;
    broken.m = 30000;
    broken.sampling = a.assumptions().sampling == Sampling::kPoisson ? Sampling::kShuffle : Sampling::kPoisson;
    for (const Violation& v : a.check(broken)) {
      QVERIFY2(!citesInternalSources(v.assumption + ": " + v.reason), v.reason.c_str());
    }
  }

  void nativeKeysArePresentForDefaultParams_data() { everyAccountant_data(); }
  void nativeKeysArePresentForDefaultParams() {
    QFETCH(QString, id);
    const Accountant& a = *findAccountant(id.toStdString());
    const Params p;
    QVERIFY2(a.check(p).empty(), "the default run satisfies every accountant");
    const std::set<std::string> keys = nativeKeysOf(a, p);
    for (const std::string& key : a.info().nativeKeys) QVERIFY2(keys.count(key), key.c_str());
    if (a.info().reportsGdpMu) QVERIFY(keys.count(std::string(kGdpMuKey)));
  }

  void variantsAreAcceptedByEpsilon_data() { everyAccountant_data(); }
  void variantsAreAcceptedByEpsilon() {
    QFETCH(QString, id);
    const Accountant& a = *findAccountant(id.toStdString());
    const std::vector<Variant>& variants = a.variants();
    QVERIFY(!variants.empty());
    QVERIFY2(variants.front().id.empty(), "variant 0 is the headline");
    std::set<std::string> ids;
    Params p;
    p.K = 500;  // keeps the exact accountant quick
    for (const Variant& v : variants) {
      QVERIFY2(ids.insert(v.id).second, v.id.c_str());
      QVERIFY(!v.label.empty());
      EpsilonOptions options;
      options.variant = v.id;
      options.exact.discretisation = 1e-2;
      const Result<EpsilonResult> e = a.epsilon(p, options);
      QVERIFY2(e.isOk(), (v.id + ": " + e.status().message()).c_str());
    }
    EpsilonOptions unknown;
    unknown.variant = "no-such-variant";
    if (a.hasRdp()) QVERIFY(!a.epsilon(p, unknown).isOk());
  }

  void idsAndColoursAreDistinct() {
    std::set<std::string> ids;
    std::set<std::uint32_t> colours;
    for (const Accountant* a : allAccountants()) {
      QVERIFY2(ids.insert(std::string(a->id())).second, a->id().data());
      QVERIFY2(colours.insert(a->info().color).second, a->id().data());
      QVERIFY2(a->info().color <= 0xffffff, a->id().data());
      QVERIFY2(a->info().color != 0x7f7f7f, "grey is the colour of curves that belong to no accountant");
      QCOMPARE(findAccountant(a->id()), a);
    }
    QVERIFY(!findAccountant("no-such-accountant"));
  }
};

QTEST_GUILESS_MAIN(TestAccountantInfo)
#include "tst_accountant_info.moc"
