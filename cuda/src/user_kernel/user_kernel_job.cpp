// A user-kernel job and its outcome as files, between the app (or CLI) and kernellab-worker:
// "key value" lines in job.txt / outcome.txt, matrices and the device code as raw files beside
// them. Both ends are the same build on the same machine, so raw bytes are portable enough.
#include "kernellab/gpu/user_kernel.hpp"

#include "kernellab/error.hpp"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace kl::gpu {

namespace {

using Fields = std::map<std::string, std::string>;

std::string escapeLine(const std::string& text)
{
    std::string out;
    for (char c : text) out += c == '\n' ? std::string("\\n") : c == '\\' ? std::string("\\\\") : std::string(1, c);
    return out;
}

std::string unescapeLine(const std::string& text)
{
    std::string out;
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\\' && i + 1 < text.size()) out += text[++i] == 'n' ? '\n' : text[i];
        else out += text[i];
    }
    return out;
}

std::filesystem::path in(const std::string& dir, const char* name) { return std::filesystem::path(dir) / name; }

void writeBytes(const std::filesystem::path& path, const void* data, size_t bytes)
{
    std::ofstream out(path, std::ios::binary);
    out.write(static_cast<const char*>(data), std::streamsize(bytes));
    if (!out) throw IoError("cannot write " + path.string());
}

std::string readBytes(const std::filesystem::path& path)
{
    std::ifstream file(path, std::ios::binary);
    if (!file) throw IoError("cannot read " + path.string());
    std::ostringstream buffer;
    buffer << file.rdbuf();
    return buffer.str();
}

void writeFields(const std::filesystem::path& path, const Fields& fields)
{
    std::ostringstream text;
    text.precision(17);
    for (const auto& [key, value] : fields) text << key << ' ' << escapeLine(value) << '\n';
    const std::string s = text.str();
    writeBytes(path, s.data(), s.size());
}

Fields readFields(const std::filesystem::path& path)
{
    Fields fields;
    std::istringstream lines(readBytes(path));
    std::string line;
    while (std::getline(lines, line)) {
        const size_t space = line.find(' ');
        if (space != std::string::npos) fields[line.substr(0, space)] = unescapeLine(line.substr(space + 1));
    }
    return fields;
}

const std::string& field(const Fields& fields, const std::string& key)
{
    const auto it = fields.find(key);
    if (it == fields.end()) throw IoError("user kernel files: '" + key + "' is missing");
    return it->second;
}
double number(const Fields& f, const std::string& key) { return std::stod(field(f, key)); }
int integer(const Fields& f, const std::string& key) { return std::stoi(field(f, key)); }
int64_t integer64(const Fields& f, const std::string& key) { return std::stoll(field(f, key)); }

std::string text(double v)
{
    std::ostringstream s;
    s.precision(17);
    s << v;
    return s.str();
}

/// A matrix as "rows cols type" in `fields` under `key` and its bytes in `dir/key.raw`.
void writeMatrix(Fields& fields, const std::string& dir, const std::string& key, const cv::Mat& m)
{
    const cv::Mat continuous = m.isContinuous() ? m : m.clone();
    fields[key] = std::to_string(m.rows) + " " + std::to_string(m.cols) + " " + std::to_string(m.type());
    writeBytes(std::filesystem::path(dir) / (key + ".raw"), continuous.data, continuous.total() * continuous.elemSize());
}

cv::Mat readMatrix(const Fields& fields, const std::string& dir, const std::string& key)
{
    std::istringstream shape(field(fields, key));
    int rows = 0, cols = 0, type = 0;
    shape >> rows >> cols >> type;
    cv::Mat m(rows, cols, type);
    const std::string bytes = readBytes(std::filesystem::path(dir) / (key + ".raw"));
    if (bytes.size() != m.total() * m.elemSize()) throw IoError("user kernel files: " + key + ".raw is truncated");
    std::copy(bytes.begin(), bytes.end(), reinterpret_cast<char*>(m.data));
    return m;
}

void writeStats(Fields& f, const std::string& key, const TimingStats& s)
{
    f[key] = text(s.medianMs) + " " + text(s.minMs) + " " + text(s.maxMs) + " " + std::to_string(s.repetitions);
}

TimingStats readStats(const Fields& f, const std::string& key)
{
    TimingStats s;
    std::istringstream(field(f, key)) >> s.medianMs >> s.minMs >> s.maxMs >> s.repetitions;
    return s;
}

} // namespace

void writeJob(const UserKernelJob& job, const std::string& dir)
{
    Fields f;
    f["op"] = job.op;
    f["entry"] = job.entry;
    f["lowered_name"] = job.loweredName;
    f["launch"] = std::to_string(job.launch.blockX) + " " + std::to_string(job.launch.blockY) + " " +
                  std::to_string(job.launch.tileX) + " " + std::to_string(job.launch.tileY) + " " +
                  std::to_string(job.launch.sharedBytes);
    f["device"] = std::to_string(job.device);
    writeMatrix(f, dir, "input", job.input);
    writeMatrix(f, dir, "taps", job.taps);
    f["output_depth"] = std::to_string(job.outputDepth);
    f["border"] = std::to_string(int(job.border));
    f["border_value"] = text(job.borderValue);
    f["out_frames"] = std::to_string(job.outFrames);
    f["offset"] = std::to_string(job.offset);
    f["binning"] = std::to_string(job.binning.bins) + " " + text(job.binning.lo) + " " + text(job.binning.hi) + " " +
                   text(job.binning.scale) + " " + text(job.binning.offset);
    f["luminance"] = std::to_string(int(job.luminance));
    f["repetitions"] = std::to_string(job.repetitions);
    f["warmup"] = std::to_string(job.warmup);
    f["end_to_end"] = std::to_string(int(job.endToEnd));
    f["pinned"] = std::to_string(int(job.pinned));
    f["timeout_s"] = text(job.timeoutSeconds);
    writeBytes(in(dir, "kernel.cubin"), job.cubin.data(), job.cubin.size());
    writeFields(in(dir, "job.txt"), f);
}

UserKernelJob readJob(const std::string& dir)
{
    const Fields f = readFields(in(dir, "job.txt"));
    UserKernelJob job;
    job.op = field(f, "op");
    job.entry = field(f, "entry");
    job.loweredName = field(f, "lowered_name");
    std::istringstream(field(f, "launch")) >> job.launch.blockX >> job.launch.blockY >> job.launch.tileX >>
        job.launch.tileY >> job.launch.sharedBytes;
    job.device = integer(f, "device");
    job.input = readMatrix(f, dir, "input");
    job.taps = readMatrix(f, dir, "taps");
    job.outputDepth = integer(f, "output_depth");
    job.border = BorderMode(integer(f, "border"));
    job.borderValue = float(number(f, "border_value"));
    job.outFrames = integer64(f, "out_frames");
    job.offset = integer64(f, "offset");
    std::istringstream(field(f, "binning")) >> job.binning.bins >> job.binning.lo >> job.binning.hi >>
        job.binning.scale >> job.binning.offset;
    job.luminance = integer(f, "luminance") != 0;
    job.repetitions = integer(f, "repetitions");
    job.warmup = integer(f, "warmup");
    job.endToEnd = integer(f, "end_to_end") != 0;
    job.pinned = integer(f, "pinned") != 0;
    job.timeoutSeconds = number(f, "timeout_s");
    job.cubin = readBytes(in(dir, "kernel.cubin"));
    return job;
}

void writeOutcome(const UserKernelOutcome& o, const std::string& dir)
{
    Fields f;
    f["error"] = o.error;
    writeStats(f, "h2d", o.h2d);
    writeStats(f, "kernel", o.kernel);
    writeStats(f, "d2h", o.d2h);
    writeStats(f, "total", o.total);
    const KernelResources& r = o.resources;
    f["resources"] = std::to_string(r.registers) + " " + std::to_string(r.staticSharedBytes) + " " +
                     std::to_string(r.dynamicSharedBytes) + " " + std::to_string(r.localBytes) + " " +
                     std::to_string(r.blockThreads) + " " + std::to_string(r.activeBlocksPerSM) + " " +
                     text(r.occupancy) + " " + std::to_string(r.gridX) + " " + std::to_string(r.gridY);
    writeMatrix(f, dir, "output", o.output);
    f["counts"] = std::to_string(o.counts.size());
    writeBytes(in(dir, "counts.raw"), o.counts.data(), o.counts.size() * sizeof(uint64_t));
    // Written last, and renamed into place: a worker killed mid-write leaves no outcome at all.
    writeFields(in(dir, "outcome.partial"), f);
    std::filesystem::rename(in(dir, "outcome.partial"), in(dir, "outcome.txt"));
}

UserKernelOutcome readOutcome(const std::string& dir)
{
    if (!std::filesystem::exists(in(dir, "outcome.txt"))) throw IoError("the kernel worker wrote no outcome");
    const Fields f = readFields(in(dir, "outcome.txt"));
    UserKernelOutcome o;
    o.error = field(f, "error");
    o.h2d = readStats(f, "h2d");
    o.kernel = readStats(f, "kernel");
    o.d2h = readStats(f, "d2h");
    o.total = readStats(f, "total");
    KernelResources& r = o.resources;
    std::istringstream(field(f, "resources")) >> r.registers >> r.staticSharedBytes >> r.dynamicSharedBytes >>
        r.localBytes >> r.blockThreads >> r.activeBlocksPerSM >> r.occupancy >> r.gridX >> r.gridY;
    o.output = readMatrix(f, dir, "output");
    const std::string counts = readBytes(in(dir, "counts.raw"));
    o.counts.resize(size_t(integer64(f, "counts")));
    if (counts.size() != o.counts.size() * sizeof(uint64_t)) throw IoError("user kernel files: counts.raw is truncated");
    std::copy(counts.begin(), counts.end(), reinterpret_cast<char*>(o.counts.data()));
    return o;
}

} // namespace kl::gpu
