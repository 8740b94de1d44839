#include "resources.hpp"

#include "kernellab/error.hpp"
#include "kernellab/gpu/engine.hpp"
#include "kernellab/image.hpp"

namespace kl::gpu {

namespace {
template <typename Map, typename Allocate> void* reuseOrGrow(Map& map, const std::string& role, size_t bytes, Allocate allocate)
{
    auto& entry = map[role];
    if (entry.bytes < bytes || !entry.ptr) {
        entry.ptr.reset();  // free first, so the old and new buffers never coexist
        entry.bytes = 0;
        entry.ptr = allocate(bytes == 0 ? 1 : bytes);
        entry.bytes = bytes;
    }
    return entry.ptr.get();
}

std::string describeBuffer(const std::string& role, size_t bytes)
{
    return "the device buffer '" + role + "' needs " + formatBytes(bytes);
}
} // namespace

uint64_t BufferCache::deviceBytes() const noexcept
{
    uint64_t held = 0;
    for (const auto& [role, entry] : device_) held += entry.bytes;
    return held;
}

void* BufferCache::device(const std::string& role, size_t bytes)
{
    if (deviceLimit_ > 0) {
        const auto existing = device_.find(role);
        const uint64_t own = existing == device_.end() ? 0 : existing->second.bytes;
        const uint64_t others = deviceBytes() - own;
        if (bytes > own && others + bytes > deviceLimit_)
            throw OutOfMemory("GPU out of memory: " + describeBuffer(role, bytes) + ", other buffers hold "
                              + formatBytes(others) + " and " + kDeviceMemoryLimitVariable + " allows "
                              + formatBytes(deviceLimit_));
    }
    try {
        return reuseOrGrow(device_, role, bytes, allocateDevice<std::byte>);
    } catch (const OutOfMemory& e) {
        static const std::string prefix = "GPU out of memory: ";
        std::string cause = e.what();
        if (cause.compare(0, prefix.size(), prefix) == 0) cause.erase(0, prefix.size());
        throw OutOfMemory(prefix + describeBuffer(role, bytes) + " (" + cause + ")");
    }
}

void* BufferCache::pinned(const std::string& role, size_t bytes)
{
    return reuseOrGrow(pinned_, role, bytes, allocatePinned<std::byte>);
}

void BufferCache::release(const std::string& role) noexcept
{
    device_.erase(role);
    pinned_.erase(role);
}

void BufferCache::clear() noexcept
{
    device_.clear();
    pinned_.clear();
}

} // namespace kl::gpu
