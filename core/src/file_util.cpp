#include "file_util.hpp"

#include "kernellab/image.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <random>
#include <system_error>

namespace fs = std::filesystem;

namespace kl::detail {

namespace {

std::string errnoMessage(int error)
{
    return std::generic_category().message(error);
}

std::string randomToken()
{
    thread_local std::mt19937_64 generator{std::random_device{}()};
    static constexpr char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    std::uniform_int_distribution<size_t> pick(0, sizeof(alphabet) - 2);
    std::string token(8, ' ');
    for (char& c : token) c = alphabet[pick(generator)];
    return token;
}

// Creates (O_EXCL) an empty file next to `target`, named ".<stem>.tmp-<token><ext>", and
// returns its path. Mode 0666 lets the umask decide the final permissions, as for any new file.
std::string createTemporaryNextTo(const fs::path& target)
{
    const fs::path directory = target.has_parent_path() ? target.parent_path() : fs::path(".");
    for (int attempt = 0; attempt < 100; ++attempt) {
        const fs::path candidate = directory / ("." + target.stem().string() + ".tmp-" + randomToken()
                                                + target.extension().string());
        const int fd = ::open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0) {
            ::close(fd);
            return candidate.string();
        }
        if (errno != EEXIST)
            throw writeError(target.string(), "cannot create a file in '" + directory.string()
                                                  + "': " + errnoMessage(errno));
    }
    throw writeError(target.string(), "cannot find a free temporary file name in '" + directory.string() + "'");
}

// The data must be on disk before the rename publishes it, or a crash could leave an empty file.
void syncToDisk(const std::string& path, const std::string& target)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw writeError(target, "cannot reopen the temporary file: " + errnoMessage(errno));
    const int result = ::fsync(fd);
    const int error = errno;
    ::close(fd);
    if (result != 0) throw writeError(target, "cannot flush to disk: " + errnoMessage(error));
}

} // namespace

IoError readError(const std::string& path, const std::string& reason)
{
    return IoError("cannot read '" + path + "': " + reason);
}

IoError writeError(const std::string& path, const std::string& reason)
{
    return IoError("cannot write '" + path + "': " + reason);
}

void requireReadableFile(const std::string& path)
{
    std::error_code error;
    const fs::file_status status = fs::status(path, error);
    if (!fs::exists(status)) {
        const bool missing = !error || error == std::errc::no_such_file_or_directory;
        throw readError(path, missing ? "no such file" : error.message());
    }
    if (fs::is_directory(status)) throw readError(path, "it is a directory, not a file");
    if (!fs::is_regular_file(status)) throw readError(path, "not a regular file");
    if (::access(path.c_str(), R_OK) != 0) throw readError(path, errnoMessage(errno));
    if (fs::file_size(path, error) == 0) throw readError(path, "the file is empty (0 bytes)");
}

std::string readWholeFile(const std::string& path)
{
    requireReadableFile(path);
    const uintmax_t size = fs::file_size(path);
    ensureMemoryAvailable(size, "reading '" + path + "'");
    std::ifstream in(path, std::ios::binary);
    std::string bytes(size, '\0');
    if (!in.read(bytes.data(), std::streamsize(size))) throw readError(path, "read failed");
    return bytes;
}

std::string lowerExtension(const std::string& path)
{
    std::string extension = fs::path(path).extension().string();
    std::transform(extension.begin(), extension.end(), extension.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    return extension;
}

void writeAtomically(const std::string& path,
                     const std::function<void(const std::string& temporaryPath)>& writeTemporary)
{
    const fs::path target(path);
    if (!target.has_filename()) throw writeError(path, "no file name given");
    std::error_code error;
    if (fs::is_directory(target, error)) throw writeError(path, "it is a directory");

    const std::string temporary = createTemporaryNextTo(target);
    try {
        writeTemporary(temporary);
        syncToDisk(temporary, path);
        if (::rename(temporary.c_str(), path.c_str()) != 0) throw writeError(path, errnoMessage(errno));
    } catch (...) {
        ::unlink(temporary.c_str());
        throw;
    }
}

void writeBytesAtomically(const std::string& path, const std::string& bytes)
{
    writeAtomically(path, [&](const std::string& temporaryPath) {
        std::ofstream out(temporaryPath, std::ios::binary | std::ios::trunc);
        out.write(bytes.data(), std::streamsize(bytes.size()));
        out.close();
        if (!out) throw writeError(path, "writing the data failed (disk full?)");
    });
}

} // namespace kl::detail
