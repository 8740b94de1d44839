// The user-kernel contract's text side: the templates, the embedded headers, the launch a source
// asks for, and its first kernel's name. None of it needs a GPU or NVRTC.
#include "kernellab/gpu/user_kernel.hpp"

#include "kernellab/error.hpp"

#include <algorithm>
#include <regex>
#include <sstream>
#include <utility>

namespace kl::gpu {

// Generated from the files cuda/CMakeLists.txt lists (cmake/EmbedTextFiles.cmake).
const std::vector<std::pair<std::string, std::string>>& embeddedUserKernelFiles();

namespace {

const std::string& embeddedFile(const std::string& path)
{
    for (const auto& [name, text] : embeddedUserKernelFiles())
        if (name == path) return text;
    throw std::logic_error("user kernel file not embedded: " + path);
}

constexpr int kMaxBlockThreads = 1024;

int parseByteCount(const std::string& text, const std::string& what)
{
    if (!std::regex_match(text, std::regex(R"(\d{1,8})")))
        throw InvalidArgument(what + ": '" + text + "' is not a number of bytes");
    return std::stoi(text);
}
constexpr int kMaxDynamicSharedBytes = 1 << 20;

} // namespace

const std::vector<std::string>& userKernelOps()
{
    static const std::vector<std::string> ops = {"conv2d", "conv1d", "histogram", "transpose"};
    return ops;
}

std::string UserKernelLaunch::text() const
{
    return "block " + std::to_string(blockX) + "x" + std::to_string(blockY) + ", tile " + std::to_string(tileWidth()) +
           "x" + std::to_string(tileHeight()) + ", " + std::to_string(sharedBytes) + " B dynamic shared memory";
}

void validateLaunch(const UserKernelLaunch& l)
{
    if (l.blockX < 1 || l.blockY < 1 || l.blockX * l.blockY > kMaxBlockThreads)
        throw InvalidArgument("block: " + std::to_string(l.blockX) + "x" + std::to_string(l.blockY) +
                              " must have 1 to " + std::to_string(kMaxBlockThreads) + " threads");
    if (l.tileX < 0 || l.tileY < 0)
        throw InvalidArgument("tile: " + std::to_string(l.tileX) + "x" + std::to_string(l.tileY) +
                              " must not be negative");
    if (l.sharedBytes < 0 || l.sharedBytes > kMaxDynamicSharedBytes)
        throw InvalidArgument("shared bytes: " + std::to_string(l.sharedBytes) + " is not in 0.." +
                              std::to_string(kMaxDynamicSharedBytes));
}

void parseDimensions(const std::string& text, int& x, int& y, const std::string& what)
{
    static const std::regex form(R"((\d{1,5})(?:x(\d{1,5}))?)");
    std::smatch m;
    if (!std::regex_match(text, m, form))
        throw InvalidArgument(what + ": '" + text + "' is not N or NxM (e.g. 256 or 32x8)");
    x = std::stoi(m[1].str());
    y = m[2].matched ? std::stoi(m[2].str()) : 1;
}

UserKernelLaunch launchFromSource(const std::string& source)
{
    UserKernelLaunch launch;
    static const std::regex directive(R"(^\s*//\s*kernellab:(.*)$)");
    std::istringstream lines(source);
    std::string line;
    for (int number = 1; std::getline(lines, line); ++number) {
        std::smatch m;
        if (!std::regex_match(line, m, directive)) continue;
        std::istringstream words(m[1].str());
        std::string key, value;
        const std::string where = "line " + std::to_string(number) + " (// kernellab: ...)";
        while (words >> key) {
            if (!(words >> value)) throw InvalidArgument(where + ": '" + key + "' needs a value");
            if (key == "block") parseDimensions(value, launch.blockX, launch.blockY, where + ": block");
            else if (key == "tile") parseDimensions(value, launch.tileX, launch.tileY, where + ": tile");
            else if (key == "shared") launch.sharedBytes = parseByteCount(value, where + ": shared");
            else throw InvalidArgument(where + ": '" + key + "' is not block, tile or shared");
        }
        validateLaunch(launch);
        return launch;
    }
    return launch;
}

std::string firstKernelName(const std::string& source)
{
    static const std::regex global(R"(__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?([A-Za-z_]\w*)\s*\()");
    std::smatch m;
    return std::regex_search(source, m, global) ? m[1].str() : std::string();
}

const std::vector<KernelTemplate>& kernelTemplates()
{
    static const std::vector<KernelTemplate> templates = [] {
        const auto make = [](const char* op, const char* name, const char* description, const char* file) {
            return KernelTemplate{op, name, description, embeddedFile(std::string("cuda/src/user_kernel/templates/") + file)};
        };
        return std::vector<KernelTemplate>{
            make("conv2d", "naive", "one thread per output pixel, taps and pixels from global memory", "conv2d_naive.cu"),
            make("conv1d", "naive", "one thread per output sample, taps and samples from global memory", "conv1d_naive.cu"),
            make("histogram", "global-atomics", "one thread per pixel, an atomicAdd on global memory per count",
                 "histogram_global_atomics.cu"),
            make("histogram", "shared", "a private histogram per block in shared memory, added to global once",
                 "histogram_shared.cu"),
            make("transpose", "naive", "one thread per pixel: coalesced reads, scattered writes", "transpose_naive.cu"),
            make("transpose", "tiled", "32x32 tiles through shared memory: coalesced both ways", "transpose_tiled.cu"),
            make("transpose", "padded", "tiled with one spare element per tile row: no bank conflicts",
                 "transpose_padded.cu"),
        };
    }();
    return templates;
}

const KernelTemplate& kernelTemplate(const std::string& op, const std::string& name)
{
    if (std::find(userKernelOps().begin(), userKernelOps().end(), op) == userKernelOps().end())
        throw InvalidArgument("op: '" + op + "' is not conv2d, conv1d, histogram or transpose");
    std::string names;
    for (const KernelTemplate& t : kernelTemplates()) {
        if (t.op != op) continue;
        if (name.empty() || t.name == name) return t;
        names += (names.empty() ? "" : ", ") + t.name;
    }
    throw InvalidArgument("template: '" + name + "' is not a " + op + " template (" + names + ")");
}

const std::vector<EmbeddedHeader>& userKernelHeaders()
{
    static const std::vector<EmbeddedHeader> headers = [] {
        std::vector<EmbeddedHeader> out;
        for (const auto& [path, text] : embeddedUserKernelFiles()) {
            if (path == "cuda/src/user_kernel/kernellab.cuh") out.push_back({"kernellab.cuh", text});
            else if (path.rfind("core/include/", 0) == 0) out.push_back({path.substr(13), text});
        }
        return out;
    }();
    return headers;
}

} // namespace kl::gpu
