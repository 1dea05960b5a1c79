//! Component declarations for Settee.
//!
//! `#[component(...)]` on a struct declares the SOFA class (or classes) it implements: the Data
//! and links, the roles, the templates and how the factory creates it. From that one declaration
//! come the Data table, a typed reference per Data (an associated constant, so that reading or
//! writing a Data the class does not declare cannot compile), the link table, the role casts
//! used by the scene's role index, and the factory entry. `#[data_group(...)]` declares Data that
//! several classes share (SOFA's base classes: every mapping's `mapForces`, every collision
//! model's `contactStiffness`).
//!
//! The grammar, with every key optional. A struct that implements one class is named after it
//! and described by the first paragraph of its doc comment, unless `name`/`description` say
//! otherwise; a struct behind several classes declares each in a `class(...)` group:
//!
//! ```text
//! /// Linear springs between pairs of DOFs.
//! #[component(
//!     name = "SpringForceField",            // default: the struct's name
//!     module = "Sofa.Component.SolidMechanics.Spring", // SOFA module registering it (getTarget)
//!     roles = [ForceField],                 // role traits the struct implements
//!     markers = [Interaction],              // marker role traits (implemented here)
//!     templates = ["Vec3d", "Rigid3d"], template_rule = FromPair,
//!     default_template = "Vec3d",           // default: Vec3d when listed, else the first
//!     create = |args| SpringForceField::new(args.layout.unwrap_or(Layout::Vec3)),
//!     inherit = [SomeGroup, Self],          // Data tables in order (`Self`: this declaration's own)
//!     data = {
//!         /// help text
//!         #[alias("indices1")] springsIndices1: Indices,
//!         stiffness: Reals = "100",
//!         "odd name" as ODD: Real = "0",
//!         center: Fixed(3) as Reals = "0 0 0",
//!         nbMeshes: Int = "2",
//!         #[indexed(nbMeshes)] "position" as INPUT_POSITION: Coords, // position1..N (a DataFamilyRef)
//!     },
//!     links = {
//!         /// help text
//!         object1: MechanicalState,
//!         #[multi] #[node_or_state] input: MechanicalState,
//!         #[search_up] ODESolver: OdeSolver,        // a node without one: its ancestors'

//!         output: _,
//!     },
//!     preparse = my_preparse, no_src_link = ["position"],
//!     class(name = "OtherName", description = "...", create = ..., type = Generic<Concrete>, data = {..}),
//! )]
//! ```

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::{format_ident, quote};
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{braced, bracketed, parenthesized, Attribute, Expr, Ident, ItemStruct, LitStr, Path, Token, Type};

/// One Data declaration.
struct DataEntry {
    name: LitStr,
    konst: Ident,
    kind: Ident,
    kind_args: Option<TokenStream2>,
    typed: Option<Ident>,
    default: Option<LitStr>,
    aliases: Vec<LitStr>,
    help: String,
    /// `#[indexed(count)]`: a member of the indexed family counted by Data `count`.
    indexed: Option<Ident>,
}

/// One link declaration.
struct LinkEntry {
    name: LitStr,
    target: Option<Path>,
    multi: bool,
    node_or_state: bool,
    search_up: bool,
    help: String,
}

/// Where a Data table comes from, in the order the class lists them.
enum Table {
    Group(Box<Type>),
    Own,
}

/// Keys of one class (or the defaults shared by the classes of a struct).
#[derive(Default)]
struct ClassKeys {
    name: Option<LitStr>,
    description: Option<LitStr>,
    module: Option<LitStr>,
    create: Option<Expr>,
    templates: Option<Vec<LitStr>>,
    default_template: Option<LitStr>,
    template_rule: Option<Ident>,
    preparse: Option<Expr>,
    no_src_link: Option<Vec<LitStr>>,
    roles: Option<Vec<Path>>,
    markers: Option<Vec<Path>>,
    inherit: Option<Vec<Table>>,
    data: Vec<DataEntry>,
    links: Option<Vec<LinkEntry>>,
    ty: Option<Type>,
}

struct Declaration {
    shared: ClassKeys,
    classes: Vec<ClassKeys>,
}

/// The first paragraph of a doc comment, its lines joined by spaces.
fn first_paragraph(attrs: &[Attribute]) -> String {
    let mut lines = Vec::new();
    for a in attrs.iter().filter(|a| a.path().is_ident("doc")) {
        if let syn::Meta::NameValue(nv) = &a.meta {
            if let Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) = &nv.value {
                let t = s.value();
                let t = t.trim();
                if t.is_empty() {
                    if lines.is_empty() {
                        continue;
                    }
                    break;
                }
                lines.push(t.to_string());
            }
        }
    }
    lines.join(" ")
}

fn doc_text(attrs: &[Attribute]) -> String {
    let mut lines = Vec::new();
    for a in attrs {
        if a.path().is_ident("doc") {
            if let syn::Meta::NameValue(nv) = &a.meta {
                if let Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) = &nv.value {
                    let t = s.value();
                    let t = t.trim();
                    if !t.is_empty() {
                        lines.push(t.to_string());
                    }
                }
            }
        }
    }
    lines.join(" ")
}

/// SOFA's Data names as Rust constants: `showArrowSize` → `SHOW_ARROW_SIZE`,
/// `rest_position` → `REST_POSITION`, `useMBKToBuild` → `USE_MBK_TO_BUILD`.
fn const_name(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !out.ends_with('_') {
                out.push('_');
            }
            continue;
        }
        if c.is_ascii_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            if (prev.is_ascii_lowercase() || prev.is_ascii_digit() || (prev.is_ascii_uppercase() && next_lower)) && !out.ends_with('_') {
                out.push('_');
            }
        }
        out.push(c.to_ascii_uppercase());
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

fn parse_str_list(input: ParseStream) -> syn::Result<Vec<LitStr>> {
    let content;
    bracketed!(content in input);
    Ok(Punctuated::<LitStr, Token![,]>::parse_terminated(&content)?.into_iter().collect())
}

fn parse_path_list(input: ParseStream) -> syn::Result<Vec<Path>> {
    let content;
    bracketed!(content in input);
    Ok(Punctuated::<Path, Token![,]>::parse_terminated(&content)?.into_iter().collect())
}

fn parse_tables(input: ParseStream) -> syn::Result<Vec<Table>> {
    let content;
    bracketed!(content in input);
    let mut out = Vec::new();
    while !content.is_empty() {
        if content.peek(Token![Self]) {
            content.parse::<Token![Self]>()?;
            out.push(Table::Own);
        } else {
            out.push(Table::Group(Box::new(content.parse()?)));
        }
        if !content.is_empty() {
            content.parse::<Token![,]>()?;
        }
    }
    Ok(out)
}

fn parse_data(input: ParseStream) -> syn::Result<Vec<DataEntry>> {
    let content;
    braced!(content in input);
    let mut out = Vec::new();
    while !content.is_empty() {
        let attrs = content.call(Attribute::parse_outer)?;
        let mut aliases = Vec::new();
        let mut indexed = None;
        for a in &attrs {
            if a.path().is_ident("alias") {
                let list: Punctuated<LitStr, Token![,]> = a.parse_args_with(Punctuated::parse_terminated)?;
                aliases.extend(list);
            } else if a.path().is_ident("indexed") {
                indexed = Some(a.parse_args::<Ident>()?);
            } else if !a.path().is_ident("doc") {
                return Err(syn::Error::new_spanned(a, "expected a doc comment, #[alias(\"...\")] or #[indexed(countData)]"));
            }
        }
        if let (Some(c), false) = (&indexed, aliases.is_empty()) {
            return Err(syn::Error::new_spanned(c, "a member of an indexed family takes no alias"));
        }
        let (name, konst) = if content.peek(LitStr) {
            let name: LitStr = content.parse()?;
            content.parse::<Token![as]>()?;
            let k: Ident = content.parse()?;
            (name, k)
        } else {
            let id: Ident = content.parse()?;
            let n = id.to_string();
            let n = n.strip_prefix("r#").unwrap_or(&n).to_string();
            (LitStr::new(&n, id.span()), Ident::new(&const_name(&n), id.span()))
        };
        content.parse::<Token![:]>()?;
        let kind: Ident = content.parse()?;
        let kind_args = if content.peek(syn::token::Paren) {
            let args;
            parenthesized!(args in content);
            Some(args.parse::<TokenStream2>()?)
        } else {
            None
        };
        let typed = if content.peek(Token![as]) {
            content.parse::<Token![as]>()?;
            Some(content.parse::<Ident>()?)
        } else {
            None
        };
        let default = if content.peek(Token![=]) {
            content.parse::<Token![=]>()?;
            Some(content.parse::<LitStr>()?)
        } else {
            None
        };
        out.push(DataEntry { name, konst, kind, kind_args, typed, default, aliases, help: doc_text(&attrs), indexed });
        if !content.is_empty() {
            content.parse::<Token![,]>()?;
        }
    }
    Ok(out)
}

fn parse_links(input: ParseStream) -> syn::Result<Vec<LinkEntry>> {
    let content;
    braced!(content in input);
    let mut out = Vec::new();
    while !content.is_empty() {
        let attrs = content.call(Attribute::parse_outer)?;
        let (mut multi, mut node_or_state, mut search_up) = (false, false, false);
        for a in &attrs {
            if a.path().is_ident("multi") {
                multi = true;
            } else if a.path().is_ident("node_or_state") {
                node_or_state = true;
            } else if a.path().is_ident("search_up") {
                search_up = true;
            } else if !a.path().is_ident("doc") {
                return Err(syn::Error::new_spanned(a, "expected a doc comment, #[multi], #[node_or_state] or #[search_up]"));
            }
        }
        let name = if content.peek(LitStr) {
            content.parse::<LitStr>()?
        } else {
            let id: Ident = content.parse()?;
            LitStr::new(&id.to_string(), id.span())
        };
        content.parse::<Token![:]>()?;
        let target = if content.peek(Token![_]) {
            content.parse::<Token![_]>()?;
            None
        } else {
            Some(content.parse::<Path>()?)
        };
        out.push(LinkEntry { name, target, multi, node_or_state, search_up, help: doc_text(&attrs) });
        if !content.is_empty() {
            content.parse::<Token![,]>()?;
        }
    }
    Ok(out)
}

/// Parses `key = value` pairs (and, at the top level, `class(...)` groups).
fn parse_keys(input: ParseStream, keys: &mut ClassKeys, classes: Option<&mut Vec<ClassKeys>>) -> syn::Result<()> {
    let mut classes = classes;
    while !input.is_empty() {
        let key: Ident = if input.peek(Token![type]) {
            let t: Token![type] = input.parse()?;
            Ident::new("type", t.span)
        } else {
            input.parse()?
        };
        let k = key.to_string();
        if k == "class" {
            let Some(list) = classes.as_deref_mut() else {
                return Err(syn::Error::new_spanned(key, "class(...) groups only at the top level"));
            };
            let content;
            parenthesized!(content in input);
            let mut c = ClassKeys::default();
            parse_keys(&content, &mut c, None)?;
            list.push(c);
        } else {
            input.parse::<Token![=]>()?;
            match k.as_str() {
                "name" => keys.name = Some(input.parse()?),
                "description" => keys.description = Some(input.parse()?),
                "module" => keys.module = Some(input.parse()?),
                "create" => keys.create = Some(input.parse()?),
                "templates" => keys.templates = Some(parse_str_list(input)?),
                "default_template" => keys.default_template = Some(input.parse()?),
                "template_rule" => keys.template_rule = Some(input.parse()?),
                "preparse" => keys.preparse = Some(input.parse()?),
                "no_src_link" => keys.no_src_link = Some(parse_str_list(input)?),
                "roles" => keys.roles = Some(parse_path_list(input)?),
                "markers" => keys.markers = Some(parse_path_list(input)?),
                "inherit" => keys.inherit = Some(parse_tables(input)?),
                "data" => keys.data = parse_data(input)?,
                "links" => keys.links = Some(parse_links(input)?),
                "type" => keys.ty = Some(input.parse()?),
                _ => return Err(syn::Error::new_spanned(key, format!("unknown key '{k}'"))),
            }
        }
        if !input.is_empty() {
            input.parse::<Token![,]>()?;
        }
    }
    Ok(())
}

impl Parse for Declaration {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut shared = ClassKeys::default();
        let mut classes = Vec::new();
        parse_keys(input, &mut shared, Some(&mut classes))?;
        Ok(Declaration { shared, classes })
    }
}

fn core() -> TokenStream2 {
    quote!(::settee_core)
}

/// The typed-reference family a Data kind is read and written as.
fn data_type(e: &DataEntry) -> Ident {
    if let Some(t) = &e.typed {
        return t.clone();
    }
    let k = e.kind.to_string();
    let fixed3 = k == "Fixed" && e.kind_args.as_ref().is_some_and(|a| a.to_string().trim() == "3");
    let t = match k.as_str() {
        "Bool" => "Bool",
        "Int" => "Int",
        "Real" => "Real",
        "Str" | "FileName" | "Options" => "Text",
        "Fixed" if fixed3 => "Vec3",
        "Fixed" | "Reals" | "RealTuples" | "Coords" | "Derivs" | "Coord" | "Deriv" => "Reals",
        "Indices" | "IndexTuples" => "Indices",
        "Strings" => "Words",
        _ => "Reals",
    };
    Ident::new(t, e.kind.span())
}

fn kind_tokens(e: &DataEntry) -> syn::Result<TokenStream2> {
    let core = core();
    let kind = &e.kind;
    let known = [
        "Bool",
        "Int",
        "Real",
        "Str",
        "FileName",
        "Options",
        "Fixed",
        "Reals",
        "RealTuples",
        "Indices",
        "IndexTuples",
        "Coords",
        "Derivs",
        "Coord",
        "Deriv",
        "Strings",
        "Color",
        "BoundingBox",
    ];
    if !known.contains(&kind.to_string().as_str()) {
        return Err(syn::Error::new_spanned(kind, format!("unknown Data kind; expected one of {}", known.join(", "))));
    }
    Ok(match (&e.kind_args, kind.to_string().as_str()) {
        (Some(args), "Options") => {
            // A list of names, or an expression giving `&[&str]`.
            let parsed: syn::Result<Punctuated<LitStr, Token![,]>> = syn::parse::Parser::parse2(Punctuated::parse_terminated, args.clone());
            match parsed {
                Ok(list) if !list.is_empty() => {
                    let names = list.iter();
                    quote!(#core::data::DataKind::Options(&[#(#names),*]))
                }
                _ => quote!(#core::data::DataKind::Options(#args)),
            }
        }
        (Some(args), _) => quote!(#core::data::DataKind::#kind(#args)),
        (None, _) => quote!(#core::data::DataKind::#kind),
    })
}

fn data_table(entries: &[DataEntry]) -> syn::Result<TokenStream2> {
    let core = core();
    let mut decls = Vec::new();
    for e in entries.iter().filter(|e| e.indexed.is_none()) {
        let name = &e.name;
        let kind = kind_tokens(e)?;
        let default = e.default.clone().unwrap_or_else(|| LitStr::new("", Span::call_site()));
        let help = &e.help;
        let aliases = &e.aliases;
        decls.push(quote!(#core::data::DataDecl { name: #name, aliases: &[#(#aliases),*], kind: #kind, default: #default, help: #help }));
    }
    Ok(quote!(&[#(#decls),*]))
}

/// The indexed families of a declaration's Data, one per count Data, members in declaration
/// order; the count must be a Data of the same declaration.
fn family_table(entries: &[&DataEntry]) -> syn::Result<TokenStream2> {
    let core = core();
    let mut counts: Vec<&Ident> = Vec::new();
    for e in entries {
        if let Some(c) = &e.indexed {
            if !entries.iter().any(|d| d.indexed.is_none() && *c == d.name.value()) {
                return Err(syn::Error::new_spanned(c, "the count of an indexed family must be a Data of this declaration"));
            }
            if !counts.contains(&c) {
                counts.push(c);
            }
        }
    }
    let mut fams = Vec::new();
    for c in counts {
        let members: Vec<DataEntry> = entries
            .iter()
            .filter(|e| e.indexed.as_ref() == Some(c))
            .map(|e| DataEntry { indexed: None, aliases: Vec::new(), ..clone_entry(e) })
            .collect();
        let table = data_table(&members)?;
        let count = LitStr::new(&c.to_string(), c.span());
        fams.push(quote!(#core::data::DataFamily { count: #count, members: #table }));
    }
    Ok(quote!(&[#(#fams),*]))
}

fn clone_entry(e: &DataEntry) -> DataEntry {
    DataEntry {
        name: e.name.clone(),
        konst: e.konst.clone(),
        kind: e.kind.clone(),
        kind_args: e.kind_args.clone(),
        typed: e.typed.clone(),
        default: e.default.clone(),
        aliases: e.aliases.clone(),
        help: e.help.clone(),
        indexed: e.indexed.clone(),
    }
}

fn data_consts(entries: &[DataEntry], seen: &mut Vec<String>) -> TokenStream2 {
    let core = core();
    let mut out = Vec::new();
    for e in entries {
        if seen.contains(&e.konst.to_string()) {
            continue;
        }
        seen.push(e.konst.to_string());
        let konst = &e.konst;
        let name = &e.name;
        let ty = data_type(e);
        if e.indexed.is_some() {
            let doc = format!("Data `{}1`, `{}2`, …: {}", e.name.value(), e.name.value(), e.help);
            out.push(quote! {
                #[doc = #doc]
                #[allow(dead_code)]
                pub const #konst: #core::data_ref::DataFamilyRef<#core::data_ref::#ty> = #core::data_ref::DataFamilyRef::declared(#name);
            });
            continue;
        }
        let doc = format!("Data `{}`: {}", e.name.value(), e.help);
        out.push(quote! {
            #[doc = #doc]
            #[allow(dead_code)]
            pub const #konst: #core::data_ref::DataRef<#core::data_ref::#ty> = #core::data_ref::DataRef::declared(#name);
        });
    }
    quote!(#(#out)*)
}

fn link_table(links: &[LinkEntry]) -> TokenStream2 {
    let core = core();
    let decls = links.iter().map(|l| {
        let name = &l.name;
        let help = &l.help;
        let (multi, nos, up) = (l.multi, l.node_or_state, l.search_up);
        let target = match &l.target {
            Some(p) => {
                let label = p.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
                quote!(Some(#core::role::RoleId::of::<dyn #p>(#label)))
            }
            None => quote!(None),
        };
        quote!(#core::component::LinkDecl { name: #name, target: #target, to_node_or_state: #nos, multi: #multi, search_up: #up, help: #help })
    });
    quote!(&[#(#decls),*])
}

fn role_plays(roles: &[Path], concrete: &TokenStream2) -> Vec<TokenStream2> {
    let core = core();
    roles
        .iter()
        .map(|p| {
            let label = p.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
            quote! {
                #core::role::RolePlay::new::<dyn #p>(
                    #core::role::RoleId::of::<dyn #p>(#label),
                    &#core::role::Caster::<dyn #p> {
                        get: |a| a.downcast_ref::<#concrete>().map(|s| s as &dyn #p),
                        get_mut: |a| a.downcast_mut::<#concrete>().map(|s| s as &mut dyn #p),
                    },
                )
            }
        })
        .collect()
}

fn expand(item: ItemStruct, decl: Declaration) -> syn::Result<TokenStream2> {
    let core = core();
    let ident = &item.ident;
    let generic = !item.generics.params.is_empty();
    let (impl_generics, ty_generics, where_clause) = item.generics.split_for_impl();
    let Declaration { shared, mut classes } = decl;
    // One class: its name defaults to the struct's, its description to the first paragraph of
    // the struct's doc comment (a component reads as a documented Rust type).
    let single = classes.is_empty();
    let own_name = LitStr::new(&ident.to_string(), ident.span());
    let own_description = LitStr::new(&first_paragraph(&item.attrs), Span::call_site());
    if classes.is_empty() {
        classes.push(ClassKeys::default());
    }

    let mut consts = Vec::new();
    let mut seen_consts = Vec::new();
    consts.push(data_consts(&shared.data, &mut seen_consts));
    let own_table_ident = format_ident!("__SETTEE_DATA_{}", ident);
    let own_table = data_table(&shared.data)?;
    let mut statics = vec![quote! {
        #[allow(non_upper_case_globals)]
        static #own_table_ident: &[#core::data::DataDecl] = #own_table;
    }];

    let mut class_idents = Vec::new();
    let mut concrete_types: Vec<TokenStream2> = Vec::new();
    let mut marker_impls = Vec::new();
    for (k, c) in classes.iter().enumerate() {
        let get = |f: fn(&ClassKeys) -> bool| f(c);
        let _ = get;
        let name = c
            .name
            .as_ref()
            .or(shared.name.as_ref())
            .or(single.then_some(&own_name))
            .ok_or_else(|| syn::Error::new(Span::call_site(), "each class(...) needs a name"))?;
        let description = c.description.clone().or(shared.description.clone()).unwrap_or_else(|| {
            if single {
                own_description.clone()
            } else {
                LitStr::new("", Span::call_site())
            }
        });
        // The SOFA module (plugin) that registers the class; empty for Settee's own classes.
        let module = c.module.clone().or(shared.module.clone()).unwrap_or_else(|| LitStr::new("", Span::call_site()));
        let concrete: TokenStream2 = match c.ty.as_ref().or(shared.ty.as_ref()) {
            Some(t) => quote!(#t),
            None if generic => return Err(syn::Error::new_spanned(ident, "a generic component names its concrete type: `type = X<Y>`")),
            None => quote!(#ident),
        };
        if !concrete_types.iter().any(|t| t.to_string() == concrete.to_string()) {
            concrete_types.push(concrete.clone());
        }
        let create = match c.create.as_ref().or(shared.create.as_ref()) {
            Some(e) => quote! {{
                fn __create(args: &#core::component::CreateArgs) -> ::std::boxed::Box<dyn #core::component::Component> {
                    let make: fn(&#core::component::CreateArgs) -> #concrete = #e;
                    ::std::boxed::Box::new(make(args))
                }
                __create
            }},
            None => quote! {{
                fn __create(_: &#core::component::CreateArgs) -> ::std::boxed::Box<dyn #core::component::Component> {
                    ::std::boxed::Box::new(<#concrete as ::std::default::Default>::default())
                }
                __create
            }},
        };
        let templates = c.templates.clone().or(shared.templates.clone()).unwrap_or_default();
        // SOFA registers Vec3d as the default template of the classes that offer it; else the
        // first template listed is the default.
        let default_template = c.default_template.clone().or(shared.default_template.clone()).unwrap_or_else(|| {
            let offered = templates.iter().find(|t| t.value() == "Vec3d").or(templates.first());
            offered.cloned().unwrap_or_else(|| LitStr::new("", Span::call_site()))
        });
        let rule = c.template_rule.clone().or(shared.template_rule.clone()).unwrap_or_else(|| Ident::new("Default", Span::call_site()));
        let preparse = match c.preparse.as_ref().or(shared.preparse.as_ref()) {
            Some(p) => quote!(Some(#p)),
            None => quote!(None),
        };
        let no_src = c.no_src_link.clone().or(shared.no_src_link.clone()).unwrap_or_default();
        let mut roles = shared.roles.clone().unwrap_or_default();
        roles.extend(c.roles.clone().unwrap_or_default());
        let mut markers = shared.markers.clone().unwrap_or_default();
        markers.extend(c.markers.clone().unwrap_or_default());
        for m in &markers {
            let key = format!("{} {}", quote!(#m), concrete);
            if !marker_impls.iter().any(|(k2, _): &(String, TokenStream2)| *k2 == key) {
                marker_impls.push((key, quote!(impl #m for #concrete {})));
            }
        }
        let mut all_roles = roles.clone();
        all_roles.extend(markers);
        let plays = role_plays(&all_roles, &concrete);

        // Data tables: the inherited groups and this declaration's own (shared, then the class's).
        let class_table_ident = format_ident!("__SETTEE_DATA_{}_{}", ident, k);
        let class_table = data_table(&c.data)?;
        consts.push(data_consts(&c.data, &mut seen_consts));
        statics.push(quote! {
            #[allow(non_upper_case_globals)]
            static #class_table_ident: &[#core::data::DataDecl] = #class_table;
        });
        let inherit = c.inherit.as_ref().or(shared.inherit.as_ref());
        let mut tables = Vec::new();
        let mut own_placed = false;
        for t in inherit.map(|v| v.as_slice()).unwrap_or(&[]) {
            match t {
                Table::Group(g) => tables.push(quote!(<#g as #core::data::DataGroup>::TABLE)),
                Table::Own => {
                    tables.push(quote!(#own_table_ident));
                    tables.push(quote!(#class_table_ident));
                    own_placed = true;
                }
            }
        }
        if !own_placed {
            tables.push(quote!(#own_table_ident));
            tables.push(quote!(#class_table_ident));
        }
        let links = c.links.as_ref().or(shared.links.as_ref()).map(|l| link_table(l)).unwrap_or_else(|| quote!(&[]));
        let own_entries: Vec<&DataEntry> = shared.data.iter().chain(c.data.iter()).collect();
        let families = family_table(&own_entries)?;

        let class_ident = format_ident!("__SETTEE_CLASS_{}_{}", ident, k);
        statics.push(quote! {
            #[allow(non_upper_case_globals)]
            static #class_ident: #core::component::ComponentClass = #core::component::ComponentClass {
                name: #name,
                description: #description,
                module: #module,
                roles: &[#(#plays),*],
                templates: &[#(#templates),*],
                default_template: #default_template,
                template_rule: #core::component::TemplateRule::#rule,
                data: &[#(#tables),*],
                families: #families,
                links: #links,
                create: #create,
                preparse: #preparse,
                no_src_link: &[#(#no_src),*],
            };
        });
        class_idents.push(class_ident);
    }

    // `clone_component`: autoref specialization (`core::component::clone_spec`) clones a `Clone`
    // type and refuses any other. It must see a concrete type, so a generic declaration
    // dispatches on the concrete types its classes list.
    let any_impls = if generic {
        vec![quote! {
            impl #impl_generics #core::component::ComponentAny for #ident #ty_generics #where_clause {
                fn as_any(&self) -> &dyn ::std::any::Any { self }
                fn as_any_mut(&mut self) -> &mut dyn ::std::any::Any { self }
                fn clone_component(&self) -> ::std::result::Result<::std::boxed::Box<dyn #core::component::Component>, #core::component::CloneRefused> {
                    #[allow(unused_imports)]
                    use #core::component::clone_spec::{ViaClone as _, ViaRefusal as _};
                    let any: &dyn ::std::any::Any = self;
                    #(
                        if let Some(c) = any.downcast_ref::<#concrete_types>() {
                            return (&#core::component::clone_spec::Probe(c)).clone_component();
                        }
                    )*
                    Err(#core::component::clone_spec::unlisted(::std::any::type_name::<Self>()))
                }
            }
        }]
    } else {
        vec![quote! {
            impl #core::component::ComponentAny for #ident {
                fn as_any(&self) -> &dyn ::std::any::Any { self }
                fn as_any_mut(&mut self) -> &mut dyn ::std::any::Any { self }
                fn clone_component(&self) -> ::std::result::Result<::std::boxed::Box<dyn #core::component::Component>, #core::component::CloneRefused> {
                    #[allow(unused_imports)]
                    use #core::component::clone_spec::{ViaClone as _, ViaRefusal as _};
                    (&#core::component::clone_spec::Probe(self)).clone_component()
                }
            }
        }]
    };
    let markers = marker_impls.into_iter().map(|(_, t)| t);
    let n = class_idents.len();
    Ok(quote! {
        #item
        impl #impl_generics #ident #ty_generics #where_clause {
            #(#consts)*
        }
        #(#statics)*
        #(#any_impls)*
        #(#markers)*
        impl #impl_generics #core::component::Declared for #ident #ty_generics #where_clause {
            const CLASSES: &'static [&'static #core::component::ComponentClass] = {
                const ALL: [&'static #core::component::ComponentClass; #n] = [#(&#class_idents),*];
                &ALL
            };
        }
    })
}

/// Declares the SOFA class (or classes) a struct implements; see the crate documentation.
#[proc_macro_attribute]
pub fn component(attr: TokenStream, item: TokenStream) -> TokenStream {
    let decl = syn::parse_macro_input!(attr as Declaration);
    let item = syn::parse_macro_input!(item as ItemStruct);
    match expand(item, decl) {
        Ok(t) => t.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

struct GroupDecl {
    data: Vec<DataEntry>,
}

impl Parse for GroupDecl {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let key: Ident = input.parse()?;
        if key != "data" {
            return Err(syn::Error::new_spanned(key, "expected `data = { ... }`"));
        }
        input.parse::<Token![=]>()?;
        let data = parse_data(input)?;
        if !input.is_empty() {
            input.parse::<Token![,]>()?;
        }
        Ok(GroupDecl { data })
    }
}

/// Declares Data shared by several classes (`#[data_group(data = { ... })]` on a unit struct):
/// typed references as associated constants, and the table classes include with
/// `inherit = [Group]`.
#[proc_macro_attribute]
pub fn data_group(attr: TokenStream, item: TokenStream) -> TokenStream {
    let decl = syn::parse_macro_input!(attr as GroupDecl);
    let item = syn::parse_macro_input!(item as ItemStruct);
    let core = core();
    let ident = &item.ident;
    let mut seen = Vec::new();
    let consts = data_consts(&decl.data, &mut seen);
    let table = match data_table(&decl.data) {
        Ok(t) => t,
        Err(e) => return e.to_compile_error().into(),
    };
    quote! {
        #item
        impl #ident {
            #consts
        }
        impl #core::data::DataGroup for #ident {
            const TABLE: &'static [#core::data::DataDecl] = #table;
        }
    }
    .into()
}
