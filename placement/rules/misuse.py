"""Misuse checks: is a capability asked of the layer that owns it? (seeds/000 placement table)

The owning layer of each capability is data (fixtures/rules/capabilities.yaml). A project's known
misuses are data too (the `misuses` of its catalog entry, with the seed's reasoning); a declared
misuse wins over everything else, so the catalog can record "Volcano is not GPU virtualisation"
even where Volcano ships a vGPU device plugin integration.
"""

from __future__ import annotations

from placement.rules.errors import RulesInputError
from placement.rules.graph import CatalogGraph, ProjectFacts
from placement.rules.models import MisuseStatus, MisuseVerdict


def _owner_providers(graph: CatalogGraph, capability, exclude: str) -> tuple[list, bool]:
    """Who to ask instead: the providers on the owning layer, else any provider (then False)."""
    slugs = graph.providers.get(capability.slug, ())
    on_owner = [
        s for s in slugs
        if s != exclude and graph.projects[s].on(capability.owner_map, capability.owner_layers)
        and capability.slug not in graph.projects[s].misuses
    ]
    chosen = on_owner or [s for s in slugs if s != exclude and capability.slug not in graph.projects[s].misuses]
    return [graph.projects[s].ref for s in chosen], bool(on_owner)


def _layers_text(graph: CatalogGraph, map_slug: str, codes) -> str:
    return " / ".join(graph.layer_label(map_slug, c) for c in codes) or "no layer"


def check_misuse(graph: CatalogGraph, slug: str, capability: str) -> MisuseVerdict:
    """Whether asking project `slug` for `capability` asks the right layer, and who to ask instead."""
    errors: dict[str, list[str]] = {}
    facts: ProjectFacts | None = graph.projects.get(slug)
    if facts is None:
        errors["slug"] = [graph.unknown_slug_message(slug)]
    cap = graph.capability(capability)
    if cap is None:
        known = sorted(graph.vocabulary.capability_slugs)
        close = [c for c in known if capability and (capability in c or c in capability)][:5]
        hint = f" Did you mean: {', '.join(close)}?" if close else f" Known: {', '.join(known)}."
        errors["capability"] = [f"Unknown capability {capability!r}.{hint}"]
    if errors:
        raise RulesInputError(errors)

    project_layers = list(facts.layers.get(cap.owner_map, ()))
    layer_owns = bool(set(project_layers) & set(cap.owner_layers))
    declared = facts.misuses.get(cap.slug)
    api = None if declared is not None or cap.slug in facts.capabilities else graph.served_api(slug, cap.slug)
    provided = cap.slug in facts.capabilities or api is not None
    providers, on_owner = _owner_providers(graph, cap, slug)
    owner_text = _layers_text(graph, cap.owner_map, cap.owner_layers)
    where = _layers_text(graph, cap.owner_map, project_layers)
    names = ", ".join(p.slug for p in providers[:8])
    if on_owner:
        provider_text, elsewhere = names, ""
    elif providers:  # nobody on the owning layer provides it: say where it comes from instead
        elsewhere = f"provided from another layer by {names}"
        provider_text = f"no catalog project on that layer yet ({elsewhere})"
    else:
        provider_text = elsewhere = "no catalog project yet"
    name = facts.ref.name

    if declared is not None:
        status = MisuseStatus.DECLARED_MISUSE
        lead = (
            f"Misuse: {declared.expectation[0].lower()}{declared.expectation[1:]} asks {name} ({where}) for "
            f"{cap.name.lower()}, which {owner_text} owns."
            if not layer_owns
            else f"Misuse: {declared.expectation[0].lower()}{declared.expectation[1:]}; {name} does not provide "
            f"{cap.name.lower()} although it sits on {owner_text}."
        )
        reason = f"{lead} {declared.why} Ask {owner_text} instead: {provider_text}."
    elif api is not None:
        status = MisuseStatus.PROVIDED
        reason = (f"{name} provides {cap.name.lower()} through the {api.ref.name}, an API it serves: "
                  f"{api.doc.placement.non_promise[0]}")
    elif provided:
        status = MisuseStatus.PROVIDED
        reason = f"{name} provides {cap.name.lower()}" + (
            f" on {where}, a layer that owns it." if layer_owns else f", although {owner_text} owns it; check the placement."
        )
    elif not layer_owns:
        status = MisuseStatus.WRONG_LAYER
        reason = (
            f"Misuse: {name} sits on {where}, but {cap.name.lower()} belongs to {owner_text} "
            f"({cap.description}) Ask {owner_text} instead: {provider_text}."
        )
    else:
        status = MisuseStatus.NOT_PROVIDED
        reason = (
            f"Misuse: {cap.name.lower()} belongs to {owner_text}, where {name} sits, but {name} does not "
            + (f"provide it. Other projects on that layer do: {provider_text}." if on_owner
               else f"provide it, and no other project on that layer does: {elsewhere}.")
        )

    return MisuseVerdict(
        project=facts.ref,
        capability=cap.slug,
        capability_name=cap.name,
        is_misuse=status != MisuseStatus.PROVIDED,
        status=status,
        expectation=declared.expectation if declared else "",
        project_layers=[graph.layer_ref(cap.owner_map, c) for c in project_layers],
        owner_layers=[graph.layer_ref(cap.owner_map, c) for c in cap.owner_layers],
        owner_plane=cap.owner_plane,
        layer_owns=layer_owns,
        providers=providers,
        reason=reason,
    )


def known_misuses(graph: CatalogGraph) -> list[MisuseVerdict]:
    """Every misuse the catalog records (each project's `misuses`), checked and explained."""
    return [
        check_misuse(graph, slug, capability)
        for slug, facts in graph.projects.items()
        for capability in facts.misuses
    ]
