#pragma once
// The variant registry: each GPU variant of an op is one descriptor, defined beside its
// kernels: its name, a one-line description, why it does not apply to a problem, and its
// launch. The engine's variants(), the auto choice, whyNotApplicable() and the errors for
// unknown or inapplicable variants all read an op's registry; nothing else lists variants.
#include "kernellab/error.hpp"
#include "kernellab/gpu/engine.hpp"

#include <string>
#include <utility>
#include <vector>

namespace kl::gpu {

/// One variant. `Problem` is what the op is asked to compute (input, spec, device); `Launch`
/// is what the op's host side calls to run it.
template <typename Problem, typename Launch> struct VariantDescriptor {
    const char* name = "";
    std::string description;
    /// Why this variant cannot run `problem`, as "needs <what it needs>; this is <what it got>";
    /// empty when it can. nullptr: it runs every valid problem.
    std::string (*whyNot)(const Problem& problem) = nullptr;
    Launch launch{};
};

/// An op's variants in teaching order, and its auto choice.
template <typename Problem, typename Launch> class VariantRegistry {
public:
    using Descriptor = VariantDescriptor<Problem, Launch>;
    /// `autoChoice` names the variant "auto" runs for a problem (one that applies to it).
    VariantRegistry(std::string op, std::vector<Descriptor> variants, const char* (*autoChoice)(const Problem&))
        : op_(std::move(op)), variants_(std::move(variants)), autoChoice_(autoChoice)
    {
    }

    [[nodiscard]] const std::vector<Descriptor>& all() const { return variants_; }

    [[nodiscard]] std::vector<VariantInfo> info() const
    {
        std::vector<VariantInfo> out;
        for (const Descriptor& d : variants_) out.push_back({d.name, d.description});
        return out;
    }

    /// Why `name` cannot run `problem`; empty when it can ("auto" always can). An unknown name
    /// is an InvalidArgument listing the valid ones.
    [[nodiscard]] std::string whyNot(const std::string& name, const Problem& problem) const
    {
        if (name == "auto") return {};
        const Descriptor& d = find(name);
        return d.whyNot ? d.whyNot(problem) : std::string();
    }

    /// The variant a run uses: auto's choice for `problem`, or the named one. Unknown names and
    /// variants that do not apply are InvalidArguments saying why and naming the ones that do.
    [[nodiscard]] const Descriptor& resolve(const std::string& requested, const Problem& problem) const
    {
        const Descriptor& d = find(requested == "auto" ? std::string(autoChoice_(problem)) : requested);
        const std::string reason = d.whyNot ? d.whyNot(problem) : std::string();
        if (!reason.empty())
            throw InvalidArgument(op_ + " variant '" + d.name + "' " + reason + "; use " + applicableNames(problem) +
                                  " or auto");
        return d;
    }

private:
    [[nodiscard]] const Descriptor& find(const std::string& name) const
    {
        for (const Descriptor& d : variants_)
            if (name == d.name) return d;
        std::string names = "auto";
        for (const Descriptor& d : variants_) names += std::string(", ") + d.name;
        throw InvalidArgument(op_ + " variant: '" + name + "' is not one of " + names);
    }

    [[nodiscard]] std::string applicableNames(const Problem& problem) const
    {
        std::string names;
        for (const Descriptor& d : variants_)
            if (!d.whyNot || d.whyNot(problem).empty()) names += (names.empty() ? "" : ", ") + std::string(d.name);
        return names;
    }

    std::string op_;
    std::vector<Descriptor> variants_;
    const char* (*autoChoice_)(const Problem&);
};

} // namespace kl::gpu
