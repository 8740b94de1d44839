#include "resources.hpp"

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
} // namespace

void* BufferCache::device(const std::string& role, size_t bytes)
{
    return reuseOrGrow(device_, role, bytes, allocateDevice<std::byte>);
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
