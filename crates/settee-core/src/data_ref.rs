//! Typed access to Data: a component reads its fields through [`DataRef`] constants, declared
//! with [`crate::data_refs!`] next to its declaration table, and listed in its class
//! ([`crate::ComponentClass::reads`]). The factory checks every listed reference against the
//! class's declaration when the class is registered, so a misspelt name or a reference of the
//! wrong type fails the first test that builds the factory, not a run.

use std::marker::PhantomData;

use crate::data::{DataDecl, DataKind, DataSet, Value};

/// A family of Data kinds read the same way, and what reading gives.
pub trait DataType: 'static {
    type Out<'a>;
    /// Name of the family, for messages.
    const NAME: &'static str;
    /// Whether a field of `kind` can be read as this type.
    fn accepts(kind: &DataKind) -> bool;
    fn read(v: &Value) -> Self::Out<'_>;
}

/// A real scalar (`f64`); integers are widened.
pub struct Real;
/// An integer scalar (`i64`).
pub struct Int;
pub struct Bool;
/// Text: strings, file names, option names.
pub struct Text;
/// Reals, flat: lists, tuples, fixed vectors, coordinates and derivatives.
pub struct Reals;
/// The first three reals of a fixed vector or coordinate, zero-padded.
pub struct Vec3;
/// Indices, flat: index lists and index tuples.
pub struct Indices;
/// A list of words.
pub struct Words;

impl DataType for Real {
    type Out<'a> = f64;
    const NAME: &'static str = "real";
    fn accepts(kind: &DataKind) -> bool {
        matches!(kind, DataKind::Real | DataKind::Int)
    }
    fn read(v: &Value) -> f64 {
        match v {
            Value::Real(r) => *r,
            Value::Int(i) => *i as f64,
            _ => 0.0,
        }
    }
}

impl DataType for Int {
    type Out<'a> = i64;
    const NAME: &'static str = "integer";
    fn accepts(kind: &DataKind) -> bool {
        matches!(kind, DataKind::Int)
    }
    fn read(v: &Value) -> i64 {
        match v {
            Value::Int(i) => *i,
            _ => 0,
        }
    }
}

impl DataType for Bool {
    type Out<'a> = bool;
    const NAME: &'static str = "boolean";
    fn accepts(kind: &DataKind) -> bool {
        matches!(kind, DataKind::Bool)
    }
    fn read(v: &Value) -> bool {
        matches!(v, Value::Bool(true))
    }
}

impl DataType for Text {
    type Out<'a> = &'a str;
    const NAME: &'static str = "text";
    fn accepts(kind: &DataKind) -> bool {
        matches!(kind, DataKind::Str | DataKind::FileName | DataKind::Options(_))
    }
    fn read(v: &Value) -> &str {
        match v {
            Value::Str(s) => s,
            _ => "",
        }
    }
}

impl DataType for Reals {
    type Out<'a> = &'a [f64];
    const NAME: &'static str = "real list";
    fn accepts(kind: &DataKind) -> bool {
        matches!(
            kind,
            DataKind::Reals | DataKind::RealTuples(_) | DataKind::Fixed(_) | DataKind::Coords | DataKind::Derivs | DataKind::Coord | DataKind::Deriv
        )
    }
    fn read(v: &Value) -> &[f64] {
        match v {
            Value::Reals { v, .. } => v,
            _ => &[],
        }
    }
}

impl DataType for Vec3 {
    type Out<'a> = [f64; 3];
    const NAME: &'static str = "3-vector";
    fn accepts(kind: &DataKind) -> bool {
        matches!(kind, DataKind::Fixed(n) if *n >= 3) || matches!(kind, DataKind::Coord | DataKind::Deriv)
    }
    fn read(v: &Value) -> [f64; 3] {
        let r = Reals::read(v);
        [r.first().copied().unwrap_or(0.0), r.get(1).copied().unwrap_or(0.0), r.get(2).copied().unwrap_or(0.0)]
    }
}

impl DataType for Indices {
    type Out<'a> = &'a [usize];
    const NAME: &'static str = "index list";
    fn accepts(kind: &DataKind) -> bool {
        matches!(kind, DataKind::Indices | DataKind::IndexTuples(_))
    }
    fn read(v: &Value) -> &[usize] {
        match v {
            Value::Indices { v, .. } => v,
            _ => &[],
        }
    }
}

impl DataType for Words {
    type Out<'a> = &'a [String];
    const NAME: &'static str = "word list";
    fn accepts(kind: &DataKind) -> bool {
        matches!(kind, DataKind::Strings)
    }
    fn read(v: &Value) -> &[String] {
        match v {
            Value::Strings(s) => s,
            _ => &[],
        }
    }
}

/// A typed reference to a declared Data field, by name.
pub struct DataRef<T> {
    name: &'static str,
    _type: PhantomData<fn() -> T>,
}

impl<T> Clone for DataRef<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for DataRef<T> {}

impl<T: DataType> DataRef<T> {
    pub const fn new(name: &'static str) -> DataRef<T> {
        DataRef { name, _type: PhantomData }
    }
    pub const fn name(self) -> &'static str {
        self.name
    }
    /// The reference as the factory checks it.
    pub const fn erased(self) -> DataUse {
        DataUse { name: self.name, type_name: T::NAME, accepts: T::accepts }
    }
}

/// A Data reference of some type, as a class lists the Data it reads.
#[derive(Clone, Copy)]
pub struct DataUse {
    pub name: &'static str,
    pub type_name: &'static str,
    pub accepts: fn(&DataKind) -> bool,
}

impl std::fmt::Debug for DataUse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} '{}'", self.type_name, self.name)
    }
}

impl DataUse {
    /// Checks the reference against declaration tables: the field must be declared (by name or
    /// alias) with a kind this reference reads.
    pub fn check(&self, tables: &[&[DataDecl]]) -> Result<(), String> {
        let decl = tables.iter().flat_map(|t| t.iter()).find(|d| d.name == self.name || d.aliases.contains(&self.name));
        match decl {
            None => Err(format!("reads Data '{}', which it does not declare", self.name)),
            Some(d) if !(self.accepts)(&d.kind) => {
                Err(format!("reads Data '{}' as a {}, but it is declared as a {}", self.name, self.type_name, d.kind.type_name()))
            }
            Some(_) => Ok(()),
        }
    }
}

impl DataSet {
    /// Reads a field through a typed reference. The factory has checked the reference against the
    /// class's declaration; a reference to a field this component lacks is a bug and panics with
    /// its name.
    pub fn get<T: DataType>(&self, r: DataRef<T>) -> T::Out<'_> {
        match self.field(r.name) {
            // A reference the class does not list is not checked at registration: check it here.
            Some(f) if T::accepts(&f.decl.kind) => T::read(&f.value),
            Some(f) => panic!("Data '{}' is declared as a {} but read as a {}", r.name, f.decl.kind.type_name(), T::NAME),
            None => panic!("Data '{}' is read but not declared (a reference missing from the class's `reads`)", r.name),
        }
    }

    /// Whether the scene gave a value (or a link) for the field.
    pub fn is_given<T: DataType>(&self, r: DataRef<T>) -> bool {
        self.field(r.name).is_some_and(|f| f.is_set)
    }
}

/// Declares typed Data references and the list a class gives as its `reads`:
///
/// ```ignore
/// settee_core::data_refs! {
///     pub(crate) static READS;
///     STIFFNESS: Reals = "stiffness";
///     DAMPING: Reals = "damping";
/// }
/// ```
#[macro_export]
macro_rules! data_refs {
    ($vis:vis static $list:ident; $($(#[$m:meta])* $name:ident : $ty:ident = $field:literal;)*) => {
        $(
            $(#[$m])*
            #[allow(dead_code)]
            $vis const $name: $crate::data_ref::DataRef<$crate::data_ref::$ty> = $crate::data_ref::DataRef::new($field);
        )*
        $vis static $list: &[$crate::data_ref::DataUse] = &[$($name.erased()),*];
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{decl, decl_alias, TemplateArity};

    static TABLE: &[DataDecl] = &[
        decl("stiffness", DataKind::Real, "10", ""),
        decl_alias("indices", &["points"], DataKind::Indices, "0 2", ""),
        decl("method", DataKind::Options(&["small", "large"]), "large", ""),
        decl("center", DataKind::Fixed(3), "1 2 3", ""),
    ];

    crate::data_refs! {
        static READS;
        STIFFNESS: Real = "stiffness";
        POINTS: Indices = "points";
        METHOD: Text = "method";
        CENTER: Vec3 = "center";
    }

    #[test]
    fn references_read_typed_values() {
        let d = DataSet::from_decls(&[TABLE], TemplateArity::SCALAR);
        assert_eq!(d.get(STIFFNESS), 10.0);
        assert_eq!(d.get(POINTS), &[0, 2]);
        assert_eq!(d.get(METHOD), "large");
        assert_eq!(d.get(CENTER), [1.0, 2.0, 3.0]);
        for r in READS {
            r.check(&[TABLE]).unwrap();
        }
    }

    #[test]
    fn misspelt_and_mistyped_references_are_refused() {
        let misspelt = DataRef::<Real>::new("stifness").erased();
        assert_eq!(misspelt.check(&[TABLE]).unwrap_err(), "reads Data 'stifness', which it does not declare");
        let mistyped = DataRef::<Real>::new("indices").erased();
        assert_eq!(mistyped.check(&[TABLE]).unwrap_err(), "reads Data 'indices' as a real, but it is declared as a index list");
        assert!(DataRef::<Reals>::new("method").erased().check(&[TABLE]).is_err());
    }
}
