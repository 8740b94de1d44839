// kernellab-opencv-bare: times the one OpenCV call a user would write for each bench case, on an
// output allocated once and reused, so KernelLab's cpu-opencv backend can be held to it.
//   kernellab-opencv-bare [--size N|WxH] [--frames N] [--threads N] [--repetitions N] [--json FILE]
#include <opencv2/core.hpp>
#include <opencv2/core/utility.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct Options {
    cv::Size size{8192, 8192};
    int frames = 16777216;
    int threads = cv::getNumberOfCPUs();
    int repetitions = 10;
    std::string json;
};

struct Row {
    std::string name, call;
    double medianMs, minMs, maxMs;
};

// One untimed warm-up (first-touch, thread pool start-up), then `repetitions` wall-clock samples.
Row timeCall(const std::string& name, const std::string& call, int repetitions, const std::function<void()>& work)
{
    work();
    std::vector<double> samples;
    for (int i = 0; i < repetitions; ++i) {
        const auto start = std::chrono::steady_clock::now();
        work();
        samples.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(samples.begin(), samples.end());
    const size_t n = samples.size();
    const double median = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
    std::cerr << name << " " << call << ": " << median << " ms\n";  // progress: a full run takes minutes
    return {name, call, median, samples.front(), samples.back()};
}

void histogram256(const cv::Mat& src, cv::Mat& hist, float lo, float hi)
{
    const int bins = 256, channel = 0;
    const float range[] = {lo, hi};
    const float* ranges[] = {range};
    cv::calcHist(&src, 1, &channel, cv::noArray(), hist, 1, &bins, ranges);
}

cv::Mat noise(cv::Size size, int type)
{
    cv::Mat m(size, type);
    if (CV_MAT_DEPTH(type) == CV_32F)
        cv::randu(m, 0.0, 1.0);
    else
        cv::randu(m, 0, 256);
    return m;
}

// The IPP and threading lines of OpenCV's build information: what the times were measured on.
std::vector<std::string> buildLines()
{
    std::vector<std::string> lines;
    std::istringstream info(cv::getBuildInformation());
    for (std::string line; std::getline(info, line);) {
        if (line.find("IPP") == std::string::npos && line.find("Parallel framework") == std::string::npos) continue;
        const size_t first = line.find_first_not_of(' ');
        line = line.substr(first);
        line.erase(std::unique(line.begin(), line.end(), [](char a, char b) { return a == ' ' && b == ' '; }), line.end());
        lines.push_back(line);
    }
    if (std::none_of(lines.begin(), lines.end(), [](const std::string& l) { return l.find("IPP") != std::string::npos; }))
        lines.insert(lines.begin(), "IPP: not in this build");  // Debian's OpenCV is built without it
    return lines;
}

std::string quoted(const std::string& s)
{
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + '"';
}

void writeJson(const std::string& path, const Options& o, const std::vector<std::string>& build, const std::vector<Row>& rows)
{
    std::ofstream f(path);
    f << "{\n  \"schema\": \"kernellab-opencv-bare\",\n  \"opencv_version\": " << quoted(CV_VERSION)
      << ",\n  \"threads\": " << cv::getNumThreads() << ",\n  \"width\": " << o.size.width << ",\n  \"height\": "
      << o.size.height << ",\n  \"frames\": " << o.frames << ",\n  \"repetitions\": " << o.repetitions
      << ",\n  \"build\": [";
    for (size_t i = 0; i < build.size(); ++i) f << (i ? ", " : "") << quoted(build[i]);
    f << "],\n  \"rows\": [";
    for (size_t i = 0; i < rows.size(); ++i)
        f << (i ? ",\n" : "\n") << "    {\"case\": " << quoted(rows[i].name) << ", \"call\": " << quoted(rows[i].call)
          << ", \"threads\": " << cv::getNumThreads() << ", \"median_ms\": " << rows[i].medianMs
          << ", \"min_ms\": " << rows[i].minMs << ", \"max_ms\": " << rows[i].maxMs << "}";
    f << "\n  ]\n}\n";
    if (!f) throw std::runtime_error("cannot write " + path);
}

Options parseOptions(int argc, char** argv)
{
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string flag = argv[i];
        if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
        const std::string value = argv[++i];
        int width = 0, height = 0;
        if (flag == "--size" && std::sscanf(value.c_str(), "%dx%d", &width, &height) >= 1)
            o.size = cv::Size(width, height > 0 ? height : width);
        else if (flag == "--frames")
            o.frames = std::stoi(value);
        else if (flag == "--threads")
            o.threads = std::stoi(value);
        else if (flag == "--repetitions")
            o.repetitions = std::stoi(value);
        else if (flag == "--json")
            o.json = value;
        else
            throw std::invalid_argument("unknown option or bad value: " + flag + " " + value);
    }
    if (o.size.width < 1 || o.size.height < 1 || o.frames < 1 || o.threads < 1 || o.repetitions < 1)
        throw std::invalid_argument("sizes, frames, threads and repetitions must be positive");
    return o;
}

std::vector<Row> runCases(const Options& o)
{
    std::vector<Row> rows;
    auto time = [&](const std::string& name, const std::string& call, const std::function<void()>& work) {
        rows.push_back(timeCall(name, call, o.repetitions, work));
    };
    const cv::Size transposed(o.size.height, o.size.width);
    {
        const cv::Mat src = noise(o.size, CV_32F);
        cv::Mat dst(o.size, CV_32F, cv::Scalar(0));
        for (int k : {3, 5, 9, 15}) {
            const cv::Mat g = cv::getGaussianKernel(k, 0, CV_32F);
            const cv::Mat kernel = g * g.t();
            const std::string name = "conv2d-f32-k" + std::to_string(k);
            time(name, "cv::GaussianBlur", [&] { cv::GaussianBlur(src, dst, cv::Size(k, k), 0, 0, cv::BORDER_REFLECT_101); });
            time(name, "cv::filter2D",
                 [&] { cv::filter2D(src, dst, CV_32F, kernel, cv::Point(-1, -1), 0, cv::BORDER_REFLECT_101); });
        }
        double lo = 0, hi = 0;
        cv::minMaxLoc(src, &lo, &hi);
        const float hiExclusive = std::nextafter(float(hi), INFINITY);  // max lands in the last bin
        cv::Mat hist(256, 1, CV_32F, cv::Scalar(0));
        time("histogram-f32", "cv::calcHist", [&] { histogram256(src, hist, float(lo), hiExclusive); });
        cv::Mat transposedDst(transposed, CV_32F, cv::Scalar(0));
        time("transpose-f32", "cv::transpose", [&] { cv::transpose(src, transposedDst); });
    }
    {
        const cv::Mat src = noise(o.size, CV_8U);
        cv::Mat hist(256, 1, CV_32F, cv::Scalar(0));
        time("histogram-u8", "cv::calcHist", [&] { histogram256(src, hist, 0, 256); });
        cv::Mat dst(transposed, CV_8U, cv::Scalar(0));
        time("transpose-u8", "cv::transpose", [&] { cv::transpose(src, dst); });
    }
    {
        const cv::Mat src = noise(o.size, CV_8UC3);
        cv::Mat dst(o.size, CV_8UC3, cv::Scalar::all(0));
        time("conv2d-u8x3-k5", "cv::GaussianBlur",
             [&] { cv::GaussianBlur(src, dst, cv::Size(5, 5), 0, 0, cv::BORDER_REFLECT_101); });
    }
    for (int taps : {15, 127, 1023, 8191}) {
        // conv1d 'same' = a correlation with the reversed taps over the signal zero-padded by
        // taps / 2 in front and (taps - 1) / 2 behind; the first `frames` outputs are the result.
        cv::Mat padded(1, o.frames + taps - 1, CV_32F, cv::Scalar(0));
        cv::randu(padded.colRange(taps / 2, taps / 2 + o.frames), -1.0, 1.0);
        cv::Mat reversedTaps(1, taps, CV_32F);
        cv::randu(reversedTaps, 0.0, 1.0);
        reversedTaps /= cv::sum(reversedTaps)[0];
        cv::Mat dst(padded.size(), CV_32F, cv::Scalar(0));
        time("conv1d-k" + std::to_string(taps), "cv::filter2D",
             [&] { cv::filter2D(padded, dst, CV_32F, reversedTaps, cv::Point(0, 0), 0, cv::BORDER_CONSTANT); });
    }
    return rows;
}

} // namespace

int main(int argc, char** argv)
{
    Options o;
    try {
        o = parseOptions(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "kernellab-opencv-bare: " << e.what()
                  << "\nusage: kernellab-opencv-bare [--size N|WxH] [--frames N] [--threads N] [--repetitions N] "
                     "[--json FILE]\n";
        return 2;
    }
    cv::setNumThreads(o.threads);
    cv::theRNG().state = 20240601;  // the same inputs every run
    const std::vector<std::string> build = buildLines();

    std::cout << "# Bare OpenCV " << CV_VERSION << " calls, " << o.size.width << "x" << o.size.height << " images, "
              << o.frames << " frames, " << cv::getNumThreads() << " threads, median of " << o.repetitions << "\n\n";
    for (const std::string& line : build) std::cout << "- " << line << "\n";
    try {
        const std::vector<Row> rows = runCases(o);
        std::cout << "\n| case | call | threads | median ms | min ms | max ms |\n| --- | --- | --- | --- | --- | --- |\n";
        char line[256];
        for (const Row& r : rows) {
            std::snprintf(line, sizeof line, "| %s | %s | %d | %.3f | %.3f | %.3f |\n", r.name.c_str(), r.call.c_str(),
                          cv::getNumThreads(), r.medianMs, r.minMs, r.maxMs);
            std::cout << line;
        }
        if (!o.json.empty()) writeJson(o.json, o, build, rows);
    } catch (const std::exception& e) {
        std::cerr << "kernellab-opencv-bare: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
