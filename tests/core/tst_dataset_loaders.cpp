// The dataset loaders (core/training/dataset.h): the built-in datasets against their
// published shapes and first records, per-record scaling, the stratified split, the CSV, LIBSVM,
// IDX and gzip parsers on well-formed and malformed input, loadData's routing of sources, and a
// short deterministic mutation run standing in for the fuzzers.
#include <zlib.h>

#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "test_util.h"
#include "training/builtin_datasets.h"
#include "training/dataset.h"

using namespace dpx::core;
using namespace dpx::core::training;

namespace {

std::span<const std::uint8_t> bytesOf(const QByteArray& data) {
  return {reinterpret_cast<const std::uint8_t*>(data.constData()), static_cast<std::size_t>(data.size())};
}

std::string_view textOf(const QByteArray& data) { return {data.constData(), static_cast<std::size_t>(data.size())}; }

QByteArray gzip(const QByteArray& data) {
  z_stream stream{};
  deflateInit2(&stream, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  QByteArray out(static_cast<qsizetype>(deflateBound(&stream, static_cast<uLong>(data.size()))) + 64, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.constData()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  deflate(&stream, Z_FINISH);
  out.resize(static_cast<qsizetype>(stream.total_out));
  deflateEnd(&stream);
  return out;
}

void appendBigEndian(QByteArray& out, quint32 value) {
  out.append(char(value >> 24)).append(char(value >> 16)).append(char(value >> 8)).append(char(value));
}

// An IDX images file of `count` images of rows×cols, pixel k of image i = (i·rows·cols + k) % 256.
QByteArray idxImages(quint32 count, quint32 rows, quint32 cols, qsizetype dataBytes = -1) {
  QByteArray out;
  appendBigEndian(out, 0x00000803);
  appendBigEndian(out, count);
  appendBigEndian(out, rows);
  appendBigEndian(out, cols);
  const qsizetype total = dataBytes >= 0 ? dataBytes : qsizetype(count) * rows * cols;
  for (qsizetype k = 0; k < total; ++k) out.append(char(k % 256));
  return out;
}

QByteArray idxLabels(const std::vector<int>& labels, qint64 claimed = -1) {
  QByteArray out;
  appendBigEndian(out, 0x00000801);
  appendBigEndian(out, quint32(claimed >= 0 ? claimed : qint64(labels.size())));
  for (const int label : labels) out.append(char(label));
  return out;
}

LoadOptions unscaled() {
  LoadOptions options;
  options.scaling = FeatureScaling::kNone;
  return options;
}

QString messageOf(const Status& status) { return QString::fromStdString(status.message()); }

QStringList namesOf(const Dataset& data) {
  QStringList names;
  for (const auto& name : data.classNames) names << QString::fromStdString(name);
  return names;
}

bool writeFile(const QString& path, const QByteArray& data) {
  QFile file(path);
  return file.open(QIODevice::WriteOnly) && file.write(data) == data.size();
}

void verifyUnitRows(const Dataset& data) {
  for (Eigen::Index r = 0; r < data.features.rows(); ++r) {
    const double norm = std::sqrt(data.features.row(r).cast<double>().squaredNorm());
    QVERIFY2(std::fabs(norm - 1.0) <= 1e-6,
             qPrintable(QStringLiteral("row %1 has norm %2").arg(r).arg(norm, 0, 'g', 10)));
  }
}

std::vector<std::int64_t> countPerClass(const Dataset& data) {
  std::vector<std::int64_t> counts(static_cast<std::size_t>(data.numClasses), 0);
  for (const auto label : data.labels) ++counts[static_cast<std::size_t>(label)];
  return counts;
}

}  // namespace

class TestDatasetLoaders : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // ---- built-in datasets --------------------------------------------------------------------

  void builtinShapesAndFirstRecord_data() {
    QTest::addColumn<QString>("source");
    QTest::addColumn<int>("records");
    QTest::addColumn<int>("features");
    QTest::addColumn<QStringList>("classNames");
    QTest::addColumn<QList<double>>("firstValues");
    QTest::addColumn<int>("firstLabel");
    QTest::addColumn<QList<qint64>>("perClass");
    QTest::newRow("digits.rst: 1797×64, digits 0-9; digits.csv.gz row 1 and class counts of its last column")
        << "builtin:digits" << 1797 << 64 << QStringList{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}
        << QList<double>{0, 0, 5, 13, 9, 1, 0, 0} << 0
        << QList<qint64>{178, 182, 177, 183, 181, 182, 181, 179, 174, 180};
    QTest::newRow("breast_cancer.rst: 569×30, 212 malignant / 357 benign; breast_cancer.csv line 2")
        << "builtin:breast-cancer" << 569 << 30 << QStringList{"malignant", "benign"}
        << QList<double>{17.99, 10.38, 122.8, 1001, 0.1184, 0.2776} << 0 << QList<qint64>{212, 357};
  }
  void builtinShapesAndFirstRecord() {
    QFETCH(QString, source);
    QFETCH(int, records);
    QFETCH(int, features);
    QFETCH(QStringList, classNames);
    QFETCH(QList<double>, firstValues);
    QFETCH(int, firstLabel);
    QFETCH(QList<qint64>, perClass);
    const auto loaded = loadData(source.toStdString(), unscaled());
    QVERIFY2(loaded.isOk(), qPrintable(messageOf(loaded.status())));
    const Dataset& data = loaded->train;
    QVERIFY(!loaded->test.has_value());
    QCOMPARE(data.size(), records);
    QCOMPARE(data.dimension(), features);
    QCOMPARE(data.numClasses, int(classNames.size()));
    QCOMPARE(namesOf(data), classNames);
    for (qsizetype j = 0; j < firstValues.size(); ++j) QCOMPARE(data.features(0, j), float(firstValues[j]));
    QCOMPARE(data.labels.front(), firstLabel);
    const auto counts = countPerClass(data);
    QCOMPARE(QList<qint64>(counts.begin(), counts.end()), perClass);
  }

  void builtinRowsHaveUnitNormByDefault_data() {
    QTest::addColumn<QString>("source");
    QTest::addColumn<QString>("description");
    QTest::newRow("digits") << "builtin:digits"
                            << "builtin:digits — 1797 records, 64 features, 10 classes, rows scaled to unit norm";
    QTest::newRow("breast-cancer")
        << "builtin:breast-cancer"
        << "builtin:breast-cancer — 569 records, 30 features, 2 classes, rows scaled to unit norm";
  }
  void builtinRowsHaveUnitNormByDefault() {
    QFETCH(QString, source);
    QFETCH(QString, description);
    const auto loaded = loadData(source.toStdString());
    QVERIFY2(loaded.isOk(), qPrintable(messageOf(loaded.status())));
    verifyUnitRows(loaded->train);
    QVERIFY(std::fabs(loaded->train.maxRowNorm() - 1.0) <= 1e-6);
    QCOMPARE(QString::fromStdString(loaded->description), description);
  }

  void builtinSourcesListsWhatLoads() {
    const auto sources = builtinSources();
    QVERIFY(sources.size() >= 2);
    QCOMPARE(QString::fromStdString(sources[0]), QStringLiteral("builtin:digits"));
    QCOMPARE(QString::fromStdString(sources[1]), QStringLiteral("builtin:breast-cancer"));
    const bool fashion = QFile::exists(QStringLiteral("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"));
    QCOMPARE(std::find(sources.begin(), sources.end(), "builtin:fashion-mnist") != sources.end(), fashion);
  }

  void unknownBuiltinIsRefused() {
    const auto loaded = loadData("builtin:cifar");
    QVERIFY(!loaded.isOk());
    QCOMPARE(loaded.status().code(), StatusCode::kInvalidArgument);
    QVERIFY(messageOf(loaded.status()).contains("builtin:digits"));
  }

  void fashionMnistLoadsWhenInstalled() {
    if (!QFile::exists(QStringLiteral("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"))) {
      QSKIP("Fashion-MNIST is not installed (Debian package dataset-fashion-mnist)");
    }
    QElapsedTimer timer;
    timer.start();
    const auto loaded = loadData("builtin:fashion-mnist");
    const qint64 elapsed = timer.elapsed();
    QVERIFY2(loaded.isOk(), qPrintable(messageOf(loaded.status())));
    qInfo("builtin:fashion-mnist loaded in %lld ms", elapsed);
    QVERIFY(loaded->test.has_value());
    // Fashion-MNIST README: 60000 training and 10000 test images of 28×28, labels 0-9 named below;
    // the first label of each file (byte 8 of train/t10k-labels-idx1-ubyte) is 9, Ankle boot.
    QCOMPARE(loaded->train.size(), 60000);
    QCOMPARE(loaded->test->size(), 10000);
    QCOMPARE(loaded->train.dimension(), 784);
    QCOMPARE(loaded->test->dimension(), 784);
    const QStringList names{"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                            "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
    QCOMPARE(namesOf(loaded->train), names);
    QCOMPARE(namesOf(*loaded->test), names);
    QCOMPARE(loaded->train.labels.front(), 9);
    QCOMPARE(loaded->test->labels.front(), 9);
    // Fashion-MNIST README: the classes are balanced, 6000 training images each.
    for (const auto count : countPerClass(loaded->train)) QCOMPARE(count, 6000);
    QVERIFY(loaded->train.maxRowNorm() <= 1.0 + 1e-6);
    QVERIFY(std::fabs(loaded->train.maxRowNorm() - 1.0) <= 1e-6);
    QVERIFY(QString::fromStdString(loaded->description).contains("60000 training + 10000 test records, 784 features"));
    const auto split = trainTestSplit(*loaded, 0.2, 1);
    QVERIFY(split.isOk());
    QCOMPARE(split->test.size(), 10000);  // its own test set, not a split

    LoadOptions raw = unscaled();
    const auto pixels = loadData("builtin:fashion-mnist", raw);
    QVERIFY(pixels.isOk());
    QCOMPARE(pixels->train.features.maxCoeff(), 1.0f);  // IDX bytes as intensities in [0, 1]
    QCOMPARE(pixels->train.features.minCoeff(), 0.0f);
  }

  void fashionMnistMissingNamesThePackage() {
    const auto loaded = detail::loadFashionMnist("/nonexistent/fashion-mnist", {});
    QVERIFY(!loaded.isOk());
    QVERIFY2(messageOf(loaded.status()).contains("dataset-fashion-mnist"), qPrintable(messageOf(loaded.status())));
  }

  // ---- scaling and splitting ----------------------------------------------------------------

  void scaleFeaturesPerRow_data() {
    QTest::addColumn<int>("scaling");
    QTest::addColumn<QList<double>>("row");
    QTest::addColumn<QList<double>>("expected");
    QTest::newRow("unit norm: (3,4)/5") << int(FeatureScaling::kUnitNorm) << QList<double>{3, 4}
                                        << QList<double>{0.6, 0.8};
    QTest::newRow("unit norm: short rows grow")
        << int(FeatureScaling::kUnitNorm) << QList<double>{0.3, 0.4} << QList<double>{0.6, 0.8};
    QTest::newRow("unit norm: zero row stays zero")
        << int(FeatureScaling::kUnitNorm) << QList<double>{0, 0} << QList<double>{0, 0};
    QTest::newRow("dataset.h clip: (3,4)/max(1,5)")
        << int(FeatureScaling::kClipNorm) << QList<double>{3, 4} << QList<double>{0.6, 0.8};
    QTest::newRow("dataset.h clip: short rows unchanged")
        << int(FeatureScaling::kClipNorm) << QList<double>{0.3, 0.4} << QList<double>{0.3, 0.4};
    QTest::newRow("dataset.h none: as read")
        << int(FeatureScaling::kNone) << QList<double>{3, 4} << QList<double>{3, 4};
  }
  void scaleFeaturesPerRow() {
    QFETCH(int, scaling);
    QFETCH(QList<double>, row);
    QFETCH(QList<double>, expected);
    FeatureMatrix features(2, row.size());
    for (qsizetype j = 0; j < row.size(); ++j) {
      features(0, j) = float(row[j]);
      features(1, j) = 1.0f;  // a second row to show rows are scaled independently
    }
    scaleFeatures(features, static_cast<FeatureScaling>(scaling));
    for (qsizetype j = 0; j < row.size(); ++j) QVERIFY(std::fabs(features(0, j) - expected[j]) <= 1e-6);
    if (static_cast<FeatureScaling>(scaling) != FeatureScaling::kNone) {
      QVERIFY(std::fabs(features(1, 0) - 1.0 / std::sqrt(double(row.size()))) <= 1e-6);
    }
  }

  void splitIsStratified_data() {
    QTest::addColumn<QString>("source");
    QTest::addColumn<double>("fraction");
    QTest::addColumn<int>("testRecords");
    QTest::newRow("breast_cancer.rst 212/357, f = 0.25: 53 + 89 = round(142.25)")
        << "builtin:breast-cancer" << 0.25 << 142;
    QTest::newRow("digits.rst 1797, f = 0.2: round(359.4)") << "builtin:digits" << 0.2 << 359;
    QTest::newRow("digits.rst 1797, f = 0.5: round(898.5)") << "builtin:digits" << 0.5 << 899;
  }
  void splitIsStratified() {
    QFETCH(QString, source);
    QFETCH(double, fraction);
    QFETCH(int, testRecords);
    const auto loaded = loadData(source.toStdString());
    QVERIFY(loaded.isOk());
    const auto split = splitDataset(loaded->train, fraction, 42);
    QVERIFY2(split.isOk(), qPrintable(messageOf(split.status())));
    QCOMPARE(split->test.size(), testRecords);
    QCOMPARE(split->train.size() + split->test.size(), loaded->train.size());
    QCOMPARE(split->train.numClasses, loaded->train.numClasses);
    QCOMPARE(split->test.classNames, loaded->train.classNames);
    const auto all = countPerClass(loaded->train);
    const auto test = countPerClass(split->test);
    for (std::size_t c = 0; c < all.size(); ++c) {
      // Stratification: each class's share of the test set is f·n_c rounded one way or the other.
      QVERIFY2(std::fabs(double(test[c]) - fraction * double(all[c])) < 1.0,
               qPrintable(QStringLiteral("class %1: %2 of %3 in test").arg(c).arg(test[c]).arg(all[c])));
    }
    verifyUnitRows(split->train);
    verifyUnitRows(split->test);
  }

  void splitIsReproducibleAndPartitions() {
    // Feature 0 is the record's index, so the split can be traced back to the records.
    Dataset data;
    data.name = "indexed";
    const int n = 101;
    data.features.resize(n, 2);
    for (int i = 0; i < n; ++i) {
      data.features(i, 0) = float(i);
      data.features(i, 1) = 1.0f;
      data.labels.push_back(i % 3 == 0 ? 0 : (i % 3 == 1 ? 1 : 2));
    }
    data.numClasses = 3;
    data.classNames = {"a", "b", "c"};
    const auto first = splitDataset(data, 0.3, 7);
    const auto again = splitDataset(data, 0.3, 7);
    const auto other = splitDataset(data, 0.3, 8);
    QVERIFY(first.isOk() && again.isOk() && other.isOk());
    QVERIFY(first->test.features == again->test.features);
    QVERIFY(first->train.features == again->train.features);
    QVERIFY(first->test.labels == again->test.labels);
    QVERIFY2(!(first->test.features == other->test.features), "seeds 7 and 8 gave the same split");
    std::set<int> seen;
    for (const Dataset* part : {&first->train, &first->test}) {
      for (Eigen::Index r = 0; r < part->features.rows(); ++r) {
        const int index = int(part->features(r, 0));
        QVERIFY(seen.insert(index).second);  // no record in both sets
        QCOMPARE(part->labels[std::size_t(r)], data.labels[std::size_t(index)]);
      }
    }
    QCOMPARE(int(seen.size()), n);     // and none lost
    QCOMPARE(first->test.size(), 30);  // round(0.3·101)
  }

  void splitRejectsBadFractions_data() {
    QTest::addColumn<double>("fraction");
    QTest::newRow("dataset.h: 0 leaves no test set") << 0.0;
    QTest::newRow("dataset.h: 1 leaves no training set") << 1.0;
    QTest::newRow("dataset.h: negative") << -0.1;
    QTest::newRow("dataset.h: NaN") << std::nan("");
  }
  void splitRejectsBadFractions() {
    QFETCH(double, fraction);
    const auto loaded = loadData("builtin:breast-cancer");
    QVERIFY(loaded.isOk());
    const auto split = splitDataset(loaded->train, fraction, 1);
    QVERIFY(!split.isOk());
    QCOMPARE(split.status().code(), StatusCode::kInvalidArgument);
    QVERIFY(messageOf(split.status()).contains("(0, 1)"));
  }

  // ---- CSV ----------------------------------------------------------------------------------

  void csvParses_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<int>("header");  // -1 detect, 0 no, 1 yes
    QTest::addColumn<int>("labelColumn");
    QTest::addColumn<QString>("labelName");
    QTest::addColumn<int>("records");
    QTest::addColumn<int>("features");
    QTest::addColumn<QStringList>("classNames");
    QTest::addColumn<QList<double>>("firstRow");
    QTest::addColumn<int>("firstLabel");
    const QStringList zeroOne{"0", "1"};
    QTest::newRow("comma") << QByteArray("1,2,0\n3,4,1\n") << -1 << -1 << "" << 2 << 2 << zeroOne << QList<double>{1, 2}
                           << 0;
    QTest::newRow("semicolon") << QByteArray("1;2;0\n3;4;1\n") << -1 << -1 << "" << 2 << 2 << zeroOne
                               << QList<double>{1, 2} << 0;
    QTest::newRow("tab") << QByteArray("1.5\t2\t1\n3\t4\t0\n") << -1 << -1 << "" << 2 << 2 << zeroOne
                         << QList<double>{1.5, 2} << 1;
    QTest::newRow("whitespace runs") << QByteArray("  1   2 0\n3 4\t\t1  \n") << -1 << -1 << "" << 2 << 2 << zeroOne
                                     << QList<double>{1, 2} << 0;
    QTest::newRow("CRLF") << QByteArray("1,2,0\r\n3,4,1\r\n") << -1 << -1 << "" << 2 << 2 << zeroOne
                          << QList<double>{1, 2} << 0;
    QTest::newRow("blank lines, no final newline")
        << QByteArray("\n1,2,0\n\n   \n3,4,1") << -1 << -1 << "" << 2 << 2 << zeroOne << QList<double>{1, 2} << 0;
    QTest::newRow("empty trailing line") << QByteArray("1,2,0\n3,4,1\n\n") << -1 << -1 << "" << 2 << 2 << zeroOne
                                         << QList<double>{1, 2} << 0;
    QTest::newRow("header detected") << QByteArray("a,b,label\n1,2,x\n3,4,y\n") << -1 << -1 << "" << 2 << 2
                                     << QStringList{"x", "y"} << QList<double>{1, 2} << 0;
    QTest::newRow("header detected by its label field") << QByteArray("1,2,y\n0.5,0.25,1\n0.1,0.2,0\n") << -1 << -1
                                                        << "" << 2 << 2 << zeroOne << QList<double>{0.5, 0.25} << 1;
    QTest::newRow("header forced off, string labels")
        << QByteArray("1,2,b\n3,4,a\n") << 0 << -1 << "" << 2 << 2 << QStringList{"a", "b"} << QList<double>{1, 2} << 1;
    QTest::newRow("label by header name") << QByteArray("species,x,y\ncat,1,2\ndog,3,4\n") << -1 << -1 << "species" << 2
                                          << 2 << QStringList{"cat", "dog"} << QList<double>{1, 2} << 0;
    QTest::newRow("label column 0") << QByteArray("1,5,6\n0,7,8\n") << -1 << 0 << "" << 2 << 2 << zeroOne
                                    << QList<double>{5, 6} << 1;
    QTest::newRow("label column -2") << QByteArray("5,1,6\n7,0,8\n") << -1 << -2 << "" << 2 << 2 << zeroOne
                                     << QList<double>{5, 6} << 1;
    QTest::newRow("string labels sorted") << QByteArray("1,2,zebra\n3,4,ant\n5,6,zebra\n") << -1 << -1 << "" << 3 << 2
                                          << QStringList{"ant", "zebra"} << QList<double>{1, 2} << 1;
    QTest::newRow("integer labels sorted by value") << QByteArray("1,10\n2,9\n3,-1\n") << -1 << -1 << "" << 3 << 1
                                                    << QStringList{"-1", "9", "10"} << QList<double>{1} << 2;
    QTest::newRow("quoted fields with commas and quotes")
        << QByteArray("\"x, y\",\"a \"\"b\"\"\",label\n1,2,\"p, q\"\n\"3\",4,r\n") << -1 << -1 << "" << 2 << 2
        << QStringList{"p, q", "r"} << QList<double>{1, 2} << 0;
    QTest::newRow("sklearn header names the classes")
        << QByteArray("3,2,neg,pos\n1,2,1\n3,4,0\n5,6,1\n") << -1 << -1 << "" << 3 << 2 << QStringList{"neg", "pos"}
        << QList<double>{1, 2} << 1;
    QTest::newRow("sklearn header without names")
        << QByteArray("2,2\n1,2,1\n3,4,0\n") << -1 << -1 << "" << 2 << 2 << zeroOne << QList<double>{1, 2} << 1;
    QTest::newRow("UTF-8 byte-order mark") << QByteArray(
                                                  "\xEF\xBB\xBF"
                                                  "1,2,0\n3,4,1\n")
                                           << -1 << -1 << "" << 2 << 2 << zeroOne << QList<double>{1, 2} << 0;
    QTest::newRow("exponents, signs and padding") << QByteArray("+1e2, -2.5E-1 ,0\n3,4,1\n") << -1 << -1 << "" << 2 << 2
                                                  << zeroOne << QList<double>{100, -0.25} << 0;
  }
  void csvParses() {
    QFETCH(QByteArray, text);
    QFETCH(int, header);
    QFETCH(int, labelColumn);
    QFETCH(QString, labelName);
    QFETCH(int, records);
    QFETCH(int, features);
    QFETCH(QStringList, classNames);
    QFETCH(QList<double>, firstRow);
    QFETCH(int, firstLabel);
    LoadOptions options = unscaled();
    if (header >= 0) options.header = header == 1;
    options.labelColumn = labelColumn;
    if (!labelName.isEmpty()) options.labelColumnName = labelName.toStdString();
    const auto parsed = parseCsv(textOf(text), options, "t.csv");
    QVERIFY2(parsed.isOk(), qPrintable(messageOf(parsed.status())));
    QCOMPARE(parsed->size(), records);
    QCOMPARE(parsed->dimension(), features);
    QCOMPARE(namesOf(*parsed), classNames);
    QCOMPARE(parsed->numClasses, int(classNames.size()));
    for (qsizetype j = 0; j < firstRow.size(); ++j) QCOMPARE(parsed->features(0, j), float(firstRow[j]));
    QCOMPARE(parsed->labels.front(), firstLabel);
    QCOMPARE(QString::fromStdString(parsed->name), QStringLiteral("t.csv"));
  }

  void csvRejects_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<int>("labelColumn");
    QTest::addColumn<QString>("labelName");
    QTest::addColumn<qint64>("maxFeatures");
    QTest::addColumn<qint64>("maxRecords");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("mustContain");
    const int parse = int(StatusCode::kParseError);
    const int invalid = int(StatusCode::kInvalidArgument);
    const qint64 f = 100000;
    const qint64 r = 10000000;
    QTest::newRow("ragged row") << QByteArray("1,2,0\n3,4,1\n5,6\n") << -1 << "" << f << r << parse
                                << "t.csv: line 3: expected 3 fields, found 2";
    QTest::newRow("ragged row after a header")
        << QByteArray("a,b,y\n1,2,0\n3,4,5,1\n") << -1 << "" << f << r << parse << "line 3: expected 3 fields, found 4";
    QTest::newRow("non-numeric field") << QByteArray("1,2,3,0\n1,2,3,1\n1,2,3,0\n1,2,3,1\n1,2,abc,1\n") << -1 << "" << f
                                       << r << parse << "t.csv: line 5, field 3: 'abc' is not a number";
    QTest::newRow("nan") << QByteArray("1,2,0\nnan,4,1\n") << -1 << "" << f << r << parse
                         << "line 2, field 1: 'nan' is not a finite number";
    QTest::newRow("-inf") << QByteArray("1,2,0\n3,-inf,1\n") << -1 << "" << f << r << parse
                          << "line 2, field 2: '-inf' is not a finite number";
    QTest::newRow("float range") << QByteArray("1,2,0\n1e39,4,1\n") << -1 << "" << f << r << parse
                                 << "line 2, field 1: '1e39' is out of range";
    QTest::newRow("double range") << QByteArray("1,2,0\n1e999,4,1\n") << -1 << "" << f << r << parse
                                  << "line 2, field 1: '1e999' is out of range";
    QTest::newRow("empty feature") << QByteArray("1,2,0\n3,,1\n") << -1 << "" << f << r << parse
                                   << "line 2, field 2: empty field";
    QTest::newRow("empty label") << QByteArray("1,2,a\n3,4,\n") << -1 << "" << f << r << parse
                                 << "line 2, field 3: empty label";
    QTest::newRow("one class") << QByteArray("1,2,0\n3,4,0\n") << -1 << "" << f << r << parse << "at least 2 classes";
    QTest::newRow("no records (empty)") << QByteArray("") << -1 << "" << f << r << parse << "t.csv: no records";
    QTest::newRow("no records (blank lines)") << QByteArray("\n \r\n\n") << -1 << "" << f << r << parse << "no records";
    QTest::newRow("no records (header only)")
        << QByteArray("a,b,label\n") << -1 << "" << f << r << parse << "no records";
    QTest::newRow("sklearn header claims more records")
        << QByteArray("5,2,neg,pos\n1,2,0\n3,4,1\n") << -1 << "" << f << r << parse
        << "line 1: header claims 5 records, but the file holds 2";
    QTest::newRow("sklearn header claims other features")
        << QByteArray("2,3,neg,pos\n1,2,0\n3,4,1\n") << -1 << "" << f << r << parse
        << "line 1: header claims 3 features per record, but line 2 has 3 fields";
    QTest::newRow("sklearn header: label outside the named classes")
        << QByteArray("2,2,neg,pos\n1,2,0\n3,4,2\n") << -1 << "" << f << r << parse
        << "line 3, field 3: label '2' is not one of the 2 classes";
    QTest::newRow("unterminated quote") << QByteArray("1,2,0\n\"3,4,1\n") << -1 << "" << f << r << parse
                                        << "line 2, field 1: unterminated quoted field";
    QTest::newRow("text after a closing quote") << QByteArray("1,2,0\n\"3\"x,4,1\n") << -1 << "" << f << r << parse
                                                << "line 2, field 1: text after the closing quote";
    QTest::newRow("one column") << QByteArray("1\n2\n") << -1 << "" << f << r << parse << "line 1: found 1 field";
    QTest::newRow("label name not in header") << QByteArray("a,b,c\n1,2,0\n") << -1 << "z" << f << r << invalid
                                              << "no column named 'z' in the header on line 1";
    QTest::newRow("a label name makes line 1 the header") << QByteArray("1,2,0\n3,4,1\n") << -1 << "z" << f << r
                                                          << invalid << "no column named 'z' in the header on line 1";
    QTest::newRow("label column outside")
        << QByteArray("1,2,0\n3,4,1\n") << 5 << "" << f << r << invalid << "label column 5 is outside the 3 columns";
    QTest::newRow("maxFeatures") << QByteArray("1,2,3,0\n3,4,5,1\n") << -1 << "" << qint64(2) << r << parse
                                 << "line 1: more than 3 fields (the limit is 2 features and a label)";
    QTest::newRow("maxRecords") << QByteArray("1,2,0\n3,4,1\n") << -1 << "" << f << qint64(1) << parse
                                << "line 2: more than 1 records";
  }
  void csvRejects() {
    QFETCH(QByteArray, text);
    QFETCH(int, labelColumn);
    QFETCH(QString, labelName);
    QFETCH(qint64, maxFeatures);
    QFETCH(qint64, maxRecords);
    QFETCH(int, code);
    QFETCH(QString, mustContain);
    LoadOptions options;
    options.labelColumn = labelColumn;
    if (!labelName.isEmpty()) options.labelColumnName = labelName.toStdString();
    options.maxFeatures = maxFeatures;
    options.maxRecords = maxRecords;
    const auto parsed = parseCsv(textOf(text), options, "t.csv");
    QVERIFY(!parsed.isOk());
    QVERIFY2(messageOf(parsed.status()).contains(mustContain), qPrintable(messageOf(parsed.status())));
    QCOMPARE(int(parsed.status().code()), code);
  }

  void csvLabelNameNeedsAHeader() {
    LoadOptions options;
    options.header = false;
    options.labelColumnName = "y";
    const auto parsed = parseCsv("1,2,0\n3,4,1\n", options, "t.csv");
    QVERIFY(!parsed.isOk());
    QCOMPARE(parsed.status().code(), StatusCode::kInvalidArgument);
    QVERIFY2(messageOf(parsed.status()).contains("the file has no header line"),
             qPrintable(messageOf(parsed.status())));
  }

  void csvManyDistinctLabelsAreRefused() {
    QByteArray text;
    for (int i = 0; i < 10'001; ++i) text += QByteArray::number(i) + ",0.5,label" + QByteArray::number(i) + "\n";
    const auto parsed = parseCsv(textOf(text), {}, "wide.csv");
    QVERIFY(!parsed.isOk());
    QVERIFY2(messageOf(parsed.status()).contains("line 10001, field 3: more than 10000 distinct labels"),
             qPrintable(messageOf(parsed.status())));
  }

  // ---- LIBSVM -------------------------------------------------------------------------------

  void libsvmParses() {
    const QByteArray text =
        "+1 1:0.5 3:2 # a comment\n-1 qid:3 2:1\n\n# a whole-line comment\n0 1:1\n3 3:4\n+1 2:-1.5e1\n";
    const auto parsed = parseLibsvm(textOf(text), unscaled(), "t.svm");
    QVERIFY2(parsed.isOk(), qPrintable(messageOf(parsed.status())));
    QCOMPARE(parsed->size(), 5);
    QCOMPARE(parsed->dimension(), 3);  // the largest index seen
    QCOMPARE(namesOf(*parsed), (QStringList{"-1", "0", "+1", "3"}));
    QCOMPARE(parsed->labels, (std::vector<std::int32_t>{2, 0, 1, 3, 2}));
    QCOMPARE(parsed->features(0, 0), 0.5f);
    QCOMPARE(parsed->features(0, 1), 0.0f);
    QCOMPARE(parsed->features(0, 2), 2.0f);
    QCOMPARE(parsed->features(1, 1), 1.0f);
    QCOMPARE(parsed->features(4, 1), -15.0f);
  }

  void libsvmRejects_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<qint64>("maxFeatures");
    QTest::addColumn<qint64>("maxBytes");
    QTest::addColumn<QString>("mustContain");
    const qint64 f = 100000;
    const qint64 b = qint64(1) << 30;
    QTest::newRow("bad token") << QByteArray("1 1:1\n-1 1:0.5 abc\n") << f << b
                               << "t.svm: line 2, token 3: 'abc' is not an index:value pair";
    QTest::newRow("index 0") << QByteArray("1 0:1\n") << f << b
                             << "line 1, token 2: feature index 0 (indices start at 1)";
    QTest::newRow("decreasing index") << QByteArray("1 1:1\n-1 3:1 2:1\n") << f << b
                                      << "line 2, token 3: feature index 2 after 3 (indices must increase)";
    QTest::newRow("repeated index") << QByteArray("1 3:1 3:1\n") << f << b << "feature index 3 after 3";
    QTest::newRow("index above maxFeatures") << QByteArray("1 1:1\n-1 11:1\n") << qint64(10) << b
                                             << "line 2, token 2: feature index 11 is above the limit of 10 features";
    QTest::newRow("index beyond 64 bits")
        << QByteArray("1 99999999999999999999999:1\n") << f << b << "is above the limit of 100000 features";
    QTest::newRow("bad index") << QByteArray("1 x:1\n") << f << b << "line 1, token 2: 'x' is not a feature index";
    QTest::newRow("bad value") << QByteArray("1 1:abc\n") << f << b << "line 1, token 2: value 'abc' is not a number";
    QTest::newRow("non-finite value") << QByteArray("1 1:nan\n") << f << b << "value 'nan' is not a finite number";
    QTest::newRow("bad label") << QByteArray("1 1:1\nyes 1:1\n") << f << b << "line 2: label 'yes' is not a number";
    QTest::newRow("one class") << QByteArray("1 1:1\n1 2:1\n") << f << b << "at least 2 classes";
    QTest::newRow("no records") << QByteArray("# nothing\n\n") << f << b << "no records";
    QTest::newRow("dense matrix above maxBytes")
        << QByteArray("1 1:1\n-1 1000:1\n") << f << qint64(1000)
        << "2 records × 1000 features as a dense float matrix take 8000 bytes, above the limit of 1000 bytes";
  }
  void libsvmRejects() {
    QFETCH(QByteArray, text);
    QFETCH(qint64, maxFeatures);
    QFETCH(qint64, maxBytes);
    QFETCH(QString, mustContain);
    LoadOptions options;
    options.maxFeatures = maxFeatures;
    options.maxBytes = maxBytes;
    const auto parsed = parseLibsvm(textOf(text), options, "t.svm");
    QVERIFY(!parsed.isOk());
    QVERIFY2(messageOf(parsed.status()).contains(mustContain), qPrintable(messageOf(parsed.status())));
  }

  // ---- IDX and gzip -------------------------------------------------------------------------

  void idxParses_data() {
    QTest::addColumn<bool>("gzipped");
    QTest::newRow("IDX (yann.lecun.com/exdb/mnist layout)") << false;
    QTest::newRow("IDX inside gzip") << true;
  }
  void idxParses() {
    QFETCH(bool, gzipped);
    QByteArray images = idxImages(3, 2, 2);
    QByteArray labels = idxLabels({0, 2, 1});
    if (gzipped) {
      images = gzip(images);
      labels = gzip(labels);
    }
    const auto parsed = parseIdx(bytesOf(images), bytesOf(labels), unscaled(), "t");
    QVERIFY2(parsed.isOk(), qPrintable(messageOf(parsed.status())));
    QCOMPARE(parsed->size(), 3);
    QCOMPARE(parsed->dimension(), 4);
    QCOMPARE(parsed->numClasses, 3);  // max label + 1
    QCOMPARE(namesOf(*parsed), (QStringList{"0", "1", "2"}));
    QCOMPARE(parsed->labels, (std::vector<std::int32_t>{0, 2, 1}));
    QCOMPARE(parsed->features(1, 0), 4.0f / 255.0f);  // pixel byte 4 of the file, first of image 1, as an intensity
    QCOMPARE(parsed->features(2, 3), 11.0f / 255.0f);
  }

  void idxRejects_data() {
    QTest::addColumn<QByteArray>("images");
    QTest::addColumn<QByteArray>("labels");
    QTest::addColumn<QString>("mustContain");
    const QByteArray good = idxImages(3, 2, 2);
    const QByteArray goodLabels = idxLabels({0, 1, 1});
    QByteArray magic = good;
    magic[0] = char(0x01);
    magic[1] = char(0x02);
    QByteArray floats = good;
    floats[2] = char(0x0D);
    QByteArray twoD = good;
    twoD[3] = char(0x02);
    QByteArray huge;
    appendBigEndian(huge, 0x803);
    appendBigEndian(huge, 3);
    appendBigEndian(huge, 0xFFFFu);
    appendBigEndian(huge, 0xFFFFu);
    QByteArray manyImages;
    appendBigEndian(manyImages, 0x803);
    appendBigEndian(manyImages, 0xFFFFFFFFu);
    appendBigEndian(manyImages, 28);
    appendBigEndian(manyImages, 28);
    QTest::newRow("truncated header")
        << good.left(10) << goodLabels
        << "t images: truncated header: 10 bytes, but a 3-dimensional IDX header takes 16";
    QTest::newRow("shorter than the magic") << good.left(3) << goodLabels << "t images: truncated header: 3 bytes";
    QTest::newRow("wrong magic") << magic << goodLabels
                                 << "t images: byte 0: magic number 0x01020803 is not an IDX magic number";
    QTest::newRow("float elements") << floats << goodLabels
                                    << "t images: byte 2: element type 0x0D (float32) is not supported";
    QTest::newRow("images of two dimensions")
        << twoD << goodLabels << "t images: byte 3: 2 dimensions (magic 0x00000802), expected 3 (magic 0x00000803)";
    QTest::newRow("labels with the images magic") << good << good << "t labels: byte 3: 3 dimensions";
    QTest::newRow("claimed count larger than the data")
        << idxImages(1000, 2, 2, 12) << goodLabels
        << "t images: the header claims 1000 images of 2×2 pixels (4000 bytes from byte 16), but only 12 bytes follow";
    QTest::newRow("claim above maxFeatures, nothing allocated")
        << huge << goodLabels << "65535×65535 = 4294836225 pixels, above the limit of 100000 features";
    QTest::newRow("claim above maxRecords")
        << manyImages << goodLabels << "byte 4: 4294967295 images, above the limit of 10000000 records";
    QTest::newRow("bytes after the data")
        << good + QByteArray(5, '\0') << goodLabels << "t images: byte 28: 5 bytes after the data";
    QTest::newRow("fewer labels than images") << good << idxLabels({0, 1}) << "t labels: byte 4: 2 labels for 3 images";
    QTest::newRow("label data shorter than claimed")
        << good << idxLabels({0, 1}, 3)
        << "t labels: the header claims 3 labels (3 bytes from byte 8), but only 2 bytes follow";
    QTest::newRow("no images") << idxImages(0, 2, 2) << idxLabels({}) << "byte 4: the header declares 0 images";
    QTest::newRow("one class") << good << idxLabels({1, 1, 1}) << "at least 2 classes";
    QTest::newRow("bad gzip") << QByteArray("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03garbage-that-is-no-deflate-data",
                                            40)
                              << goodLabels << "t images: gzip: byte";
  }
  void idxRejects() {
    QFETCH(QByteArray, images);
    QFETCH(QByteArray, labels);
    QFETCH(QString, mustContain);
    const auto parsed = parseIdx(bytesOf(images), bytesOf(labels), {}, "t");
    QVERIFY(!parsed.isOk());
    QCOMPARE(parsed.status().code(), StatusCode::kParseError);
    QVERIFY2(messageOf(parsed.status()).contains(mustContain), qPrintable(messageOf(parsed.status())));
  }

  void gunzipRoundTripsAndPassesPlainData() {
    QByteArray text;
    for (int i = 0; i < 5000; ++i) text += "line " + QByteArray::number(i) + "\n";
    const auto inflated = gunzip(bytesOf(gzip(text)), text.size());  // exactly at the limit
    QVERIFY2(inflated.isOk(), qPrintable(messageOf(inflated.status())));
    QCOMPARE(QByteArray(reinterpret_cast<const char*>(inflated->data()), qsizetype(inflated->size())), text);
    const auto plain = gunzip(bytesOf(text), text.size());
    QVERIFY(plain.isOk());
    QCOMPARE(QByteArray(reinterpret_cast<const char*>(plain->data()), qsizetype(plain->size())), text);
    // RFC 1952 §2.2: a gzip file may hold several members, decompressed one after the other.
    const auto twoMembers = gunzip(bytesOf(gzip("abc") + gzip("def")), 100);
    QVERIFY(twoMembers.isOk());
    QCOMPARE(QByteArray(reinterpret_cast<const char*>(twoMembers->data()), qsizetype(twoMembers->size())),
             QByteArray("abcdef"));
  }

  void gunzipRejects_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<qint64>("maxBytes");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("mustContain");
    QByteArray zeros(10 << 20, '\0');
    const QByteArray bomb = gzip(zeros);
    QByteArray forged = bomb;  // ISIZE says 100 bytes: only the chunked limit can catch it
    forged[forged.size() - 4] = char(100);
    forged[forged.size() - 3] = 0;
    forged[forged.size() - 2] = 0;
    forged[forged.size() - 1] = 0;
    const QByteArray text = gzip(QByteArray("hello, world, hello, world, hello, world\n").repeated(100));
    QByteArray corrupt = text;
    for (qsizetype i = 12; i < 30; ++i) corrupt[i] = char(0xff);
    const int invalid = int(StatusCode::kInvalidArgument);
    const int parse = int(StatusCode::kParseError);
    QTest::newRow("gzip bomb, trailer above maxBytes")
        << bomb << qint64(1 << 20) << invalid
        << "declares 10485760 decompressed bytes, above the limit of 1048576 bytes";
    QTest::newRow("gzip bomb, forged trailer")
        << forged << qint64(1 << 20) << invalid << "exceeds the limit of 1048576 bytes";
    QTest::newRow("plain data above maxBytes")
        << QByteArray(100, 'x') << qint64(99) << invalid << "above the limit of 99 bytes";
    QTest::newRow("corrupt deflate data") << corrupt << qint64(1 << 20) << parse << "gzip: byte";
    QTest::newRow("truncated stream") << text.left(text.size() - 12) << qint64(1 << 20) << parse << "truncated";
    QTest::newRow("RFC 1952: too short for header and trailer")
        << QByteArray("\x1f\x8b\x08", 3) << qint64(100) << parse << "truncated: 3 bytes";
    QTest::newRow("RFC 1952: junk after the member")
        << text + "junk" << qint64(1 << 20) << parse << "unexpected data after the gzip stream";
  }
  void gunzipRejects() {
    QFETCH(QByteArray, bytes);
    QFETCH(qint64, maxBytes);
    QFETCH(int, code);
    QFETCH(QString, mustContain);
    const auto inflated = gunzip(bytesOf(bytes), maxBytes);
    QVERIFY(!inflated.isOk());
    QVERIFY2(messageOf(inflated.status()).contains(mustContain), qPrintable(messageOf(inflated.status())));
    QCOMPARE(int(inflated.status().code()), code);
  }

  // ---- loadData routing ---------------------------------------------------------------------

  void loadDataMissingFileNamesThePath() {
    const auto loaded = loadData("/nonexistent/data.csv");
    QVERIFY(!loaded.isOk());
    QCOMPARE(loaded.status().code(), StatusCode::kIoError);
    QVERIFY2(messageOf(loaded.status()).contains("/nonexistent/data.csv"), qPrintable(messageOf(loaded.status())));
  }

  void loadDataFixtures_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<int>("records");
    QTest::addColumn<int>("features");
    QTest::addColumn<QStringList>("classNames");
    QTest::addColumn<double>("firstValue");
    const QString dir = QStringLiteral(DPX_TEST_DATA_DIR "/datasets/");
    QTest::newRow("iris.csv (sklearn) rows 1, 2, 51, 52, 101, 102 with a named header")
        << dir + "flowers.csv" << 6 << 4 << QStringList{"setosa", "versicolor", "virginica"} << 5.1;
    QTest::newRow("LIBSVM by extension") << dir + "sample.svm" << 4 << 3 << QStringList{"-1", "+1"} << 0.25;
    QTest::newRow("LIBSVM sniffed in a .txt") << dir + "sample_libsvm.txt" << 4 << 3 << QStringList{"-1", "+1"} << 0.25;
    QTest::newRow("CSV sniffed in a .txt") << dir + "sample_csv.txt" << 3 << 2 << QStringList{"0", "1"} << 1.0;
  }
  void loadDataFixtures() {
    QFETCH(QString, file);
    QFETCH(int, records);
    QFETCH(int, features);
    QFETCH(QStringList, classNames);
    QFETCH(double, firstValue);
    const auto loaded = loadData(file.toStdString(), unscaled());
    QVERIFY2(loaded.isOk(), qPrintable(messageOf(loaded.status())));
    QCOMPARE(loaded->train.size(), records);
    QCOMPARE(loaded->train.dimension(), features);
    QCOMPARE(namesOf(loaded->train), classNames);
    QCOMPARE(loaded->train.features(0, 0), float(firstValue));
    QVERIFY(QString::fromStdString(loaded->description).endsWith("features as read (not scaled)"));
  }

  void loadDataReadsGzippedCsvAndTsv() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QByteArray csv = "x,y,label\n3,4,a\n0,0,b\n6,8,a\n";
    QVERIFY(writeFile(dir.filePath("d.csv.gz"), gzip(csv)));
    const auto loaded = loadData(dir.filePath("d.csv.gz").toStdString());
    QVERIFY2(loaded.isOk(), qPrintable(messageOf(loaded.status())));
    QCOMPARE(loaded->train.size(), 3);
    QCOMPARE(loaded->train.features(0, 0), 0.6f);  // unit norm: (3,4)/5
    QCOMPARE(loaded->train.features(1, 0), 0.0f);  // zero rows stay zero
    QVERIFY(QString::fromStdString(loaded->description)
                .contains("3 records, 2 features, 2 classes, rows scaled to unit norm"));
    QVERIFY(writeFile(dir.filePath("d.tsv"), "1\t2\t0\n3\t4\t1\n"));
    const auto tsv = loadData(dir.filePath("d.tsv").toStdString(), unscaled());
    QVERIFY2(tsv.isOk(), qPrintable(messageOf(tsv.status())));
    QCOMPARE(tsv->train.features(1, 1), 4.0f);
    QVERIFY(writeFile(dir.filePath("bad.csv"), "1,2,0\n3,4\n"));
    const auto bad = loadData(dir.filePath("bad.csv").toStdString());
    QVERIFY(!bad.isOk());
    QVERIFY2(messageOf(bad.status()).contains(dir.filePath("bad.csv") + ": line 2: expected 3 fields, found 2"),
             qPrintable(messageOf(bad.status())));
  }

  void loadDataReadsIdxDirectoriesAndPairs() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QVERIFY(writeFile(dir.filePath("train-images-idx3-ubyte.gz"), gzip(idxImages(3, 2, 2))));
    QVERIFY(writeFile(dir.filePath("train-labels-idx1-ubyte"), idxLabels({0, 1, 1})));
    QVERIFY(writeFile(dir.filePath("t10k-images-idx3-ubyte"), idxImages(2, 2, 2)));
    QVERIFY(writeFile(dir.filePath("t10k-labels-idx1-ubyte.gz"), gzip(idxLabels({1, 2}))));
    const auto loaded = loadData(dir.path().toStdString(), unscaled());
    QVERIFY2(loaded.isOk(), qPrintable(messageOf(loaded.status())));
    QCOMPARE(loaded->train.size(), 3);
    QVERIFY(loaded->test.has_value());
    QCOMPARE(loaded->test->size(), 2);
    QCOMPARE(loaded->train.numClasses, 3);  // the test set's label 2 counts for both
    QCOMPARE(loaded->test->numClasses, 3);
    QVERIFY2(QString::fromStdString(loaded->description).contains("3 training + 2 test records, 4 features, 3 classes"),
             loaded->description.c_str());
    const auto split = trainTestSplit(*loaded, 0.5, 3);
    QVERIFY(split.isOk());
    QCOMPARE(split->train.size(), 3);
    QCOMPARE(split->test.size(), 2);

    const std::string pair = dir.filePath("train-images-idx3-ubyte.gz").toStdString() + "," +
                             dir.filePath("train-labels-idx1-ubyte").toStdString();
    const auto fromPair = loadData(pair, unscaled());
    QVERIFY2(fromPair.isOk(), qPrintable(messageOf(fromPair.status())));
    QCOMPARE(fromPair->train.size(), 3);
    QVERIFY(!fromPair->test.has_value());
    QCOMPARE(fromPair->train.features(2, 3), 11.0f / 255.0f);

    const auto lone = loadData(dir.filePath("t10k-images-idx3-ubyte").toStdString());
    QVERIFY(!lone.isOk());
    QVERIFY(messageOf(lone.status()).contains("IMAGES,LABELS"));

    QTemporaryDir empty;
    const auto none = loadData(empty.path().toStdString());
    QVERIFY(!none.isOk());
    QCOMPARE(none.status().code(), StatusCode::kIoError);
    QVERIFY(messageOf(none.status()).contains("train-images-idx3-ubyte"));
  }

  // ---- robustness ---------------------------------------------------------------------------

  // A short, deterministic stand-in for the libFuzzer targets: byte flips, insertions and
  // truncations of valid inputs must give a value or a ParseError-like Status, never a crash
  // (run under ASan/UBSan via DPX_SANITIZE to make "never" meaningful).
  void mutatedInputsNeverCrash() {
    std::mt19937_64 engine(2024);
    const QByteArray csv = "a,b,\"c, d\",label\n1,2,3,x\n4.5e1,-6,7,y\n\"8\",9,10,x\n";
    const QByteArray svm = "+1 1:0.5 3:2 # c\n-1 qid:1 2:1\n0 1:1\n";
    const QByteArray images = idxImages(4, 3, 3);
    const QByteArray labels = idxLabels({0, 1, 2, 1});
    const QByteArray gzImages = gzip(images);
    LoadOptions options;
    options.maxBytes = 1 << 16;
    options.maxFeatures = 64;
    options.maxRecords = 1000;
    const auto mutate = [&engine](QByteArray data) {
      const int edits = 1 + int(engine() % 4);
      for (int e = 0; e < edits; ++e) {
        const auto where = data.isEmpty() ? 0 : qsizetype(engine() % std::uint64_t(data.size()));
        switch (engine() % 4) {
          case 0:
            if (!data.isEmpty()) data[where] = char(engine());
            break;
          case 1:
            data.insert(where, char(engine()));
            break;
          case 2:
            data.truncate(where);
            break;
          default:
            data.insert(where, QByteArray("\"\n,;\t:#\r 0.1e9").mid(qsizetype(engine() % 14), 2));
            break;
        }
      }
      return data;
    };
    int accepted = 0;
    for (int i = 0; i < 3000; ++i) {
      const QByteArray c = mutate(csv);
      const QByteArray s = mutate(svm);
      const QByteArray im = mutate(i % 2 ? images : gzImages);
      const QByteArray lb = mutate(labels);
      const auto a = parseCsv(textOf(c), options);
      const auto b = parseLibsvm(textOf(s), options);
      const auto d = parseIdx(bytesOf(im), bytesOf(lb), options);
      const auto g = gunzip(bytesOf(mutate(gzImages)), 1 << 12);
      for (const Status& status : {a.status(), b.status(), d.status(), g.status()}) {
        if (status.isOk()) {
          ++accepted;
        } else {
          QVERIFY(!status.message().empty());
        }
      }
      if (a.isOk()) {
        QVERIFY(a->numClasses >= 2);
        QCOMPARE(a->features.rows(), a->size());
      }
    }
    QVERIFY(accepted > 0);  // some mutations are harmless: the inputs were not all refused
  }
};

QTEST_GUILESS_MAIN(TestDatasetLoaders)
#include "tst_dataset_loaders.moc"
