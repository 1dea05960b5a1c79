//! Typed access to Data: a component reads and writes its fields through [`DataRef`] constants,
//! which only a declaration creates (`#[component(data = {...})]` gives the class one associated
//! constant per Data, `#[data_group(...)]` one per shared Data). Reading or writing a Data the
//! class does not declare therefore does not compile:
//!
//! ```compile_fail
//! use settee_core::data_ref::{DataRef, Real};
//! // There is no way to name a Data outside a declaration.
//! const NOT_DECLARED: DataRef<Real> = DataRef::new("stiffness");
//! ```
//!
//! The only write by name is [`crate::DataSet::write_value`], checked at run time for generic
//! code (scene overrides, tools, bindings).

use std::marker::PhantomData;

use crate::data::{DataKind, DataSet, TemplateArity, Value};

/// A family of Data kinds read the same way, and what reading gives.
pub trait DataType: 'static {
    type Out<'a>;
    /// What writing takes.
    type In;
    /// Name of the family, for messages.
    const NAME: &'static str;
    /// Whether a field of `kind` can be read as this type.
    fn accepts(kind: &DataKind) -> bool;
    fn read(v: &Value) -> Self::Out<'_>;
    /// The value of a field of `kind` holding `v` (`group`: the reals or indices per element of
    /// the kind).
    fn write(v: Self::In, group: usize) -> Value;
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
    type In = f64;
    fn write(v: f64, _: usize) -> Value {
        Value::Real(v)
    }
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
    type In = i64;
    fn write(v: i64, _: usize) -> Value {
        Value::Int(v)
    }
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
    type In = bool;
    fn write(v: bool, _: usize) -> Value {
        Value::Bool(v)
    }
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
    type In = String;
    fn write(v: String, _: usize) -> Value {
        Value::Str(v)
    }
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
    type In = Vec<f64>;
    fn write(v: Vec<f64>, group: usize) -> Value {
        Value::Reals { arity: group, v }
    }
    const NAME: &'static str = "real list";
    fn accepts(kind: &DataKind) -> bool {
        matches!(
            kind,
            DataKind::Reals
                | DataKind::RealTuples(_)
                | DataKind::Fixed(_)
                | DataKind::Coords
                | DataKind::Derivs
                | DataKind::Coord
                | DataKind::Deriv
                | DataKind::Color
                | DataKind::BoundingBox
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
    type In = [f64; 3];
    fn write(v: [f64; 3], _: usize) -> Value {
        Value::Reals { arity: 3, v: v.to_vec() }
    }
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
    type In = Vec<usize>;
    fn write(v: Vec<usize>, group: usize) -> Value {
        Value::Indices { arity: group, v }
    }
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
    type In = Vec<String>;
    fn write(v: Vec<String>, _: usize) -> Value {
        Value::Strings(v)
    }
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

/// A typed reference to a declared Data field, by name. Only declarations create them.
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
    /// Used by the `#[component]` and `#[data_group]` declarations.
    #[doc(hidden)]
    pub const fn declared(name: &'static str) -> DataRef<T> {
        DataRef { name, _type: PhantomData }
    }
    pub const fn name(self) -> &'static str {
        self.name
    }
}

/// A typed reference to a member of an indexed Data family ([`crate::data::DataFamily`]):
/// instance `i` (1-based) is the Data named `base` followed by `i`.
pub struct DataFamilyRef<T> {
    base: &'static str,
    _type: PhantomData<fn() -> T>,
}

impl<T> Clone for DataFamilyRef<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for DataFamilyRef<T> {}

impl<T: DataType> DataFamilyRef<T> {
    /// Used by the `#[component]` declaration.
    #[doc(hidden)]
    pub const fn declared(base: &'static str) -> DataFamilyRef<T> {
        DataFamilyRef { base, _type: PhantomData }
    }
    pub const fn base(self) -> &'static str {
        self.base
    }
    /// The name of instance `i` (1-based).
    pub fn name(self, i: usize) -> String {
        format!("{}{i}", self.base)
    }
}

/// Reals (or indices) per element of a field of `kind`.
fn group_size(kind: &DataKind, arity: TemplateArity) -> usize {
    match kind.storage() {
        DataKind::Fixed(n) | DataKind::RealTuples(n) | DataKind::IndexTuples(n) => n,
        DataKind::Coords | DataKind::Coord => arity.coord,
        DataKind::Derivs | DataKind::Deriv => arity.deriv,
        _ => 1,
    }
}

impl DataSet {
    fn typed_index<T: DataType>(&self, r: DataRef<T>) -> usize {
        self.typed_index_of::<T>(r.name)
    }

    fn typed_index_of<T: DataType>(&self, name: &str) -> usize {
        match self.index_of(name) {
            Some(i) if T::accepts(&self.fields[i].decl.kind) => i,
            Some(i) => panic!("Data '{name}' is declared as a {} but used as a {}", self.fields[i].decl.kind.type_name(), T::NAME),
            None => panic!("Data '{name}' is used on a component whose class does not declare it (a reference of another class)"),
        }
    }

    /// How many instances of a family member the component has now (`name1..nameN` present).
    pub fn family_len<T: DataType>(&self, r: DataFamilyRef<T>) -> usize {
        (1..).take_while(|&i| self.index_of(&r.name(i)).is_some()).count()
    }

    /// Reads instance `i` (1-based) of a family member; `i` must be below
    /// [`DataSet::family_len`] + 1.
    pub fn get_at<T: DataType>(&self, r: DataFamilyRef<T>, i: usize) -> T::Out<'_> {
        T::read(&self.fields[self.typed_index_of::<T>(&r.name(i))].value)
    }

    /// Writes instance `i` (1-based) of a family member.
    pub fn put_at<T: DataType>(&mut self, r: DataFamilyRef<T>, i: usize, v: T::In) {
        let idx = self.typed_index_of::<T>(&r.name(i));
        let group = group_size(&self.fields[idx].decl.kind, self.arity());
        self.replace(idx, T::write(v, group));
    }

    /// Reads a field through a typed reference of the class's declaration.
    pub fn get<T: DataType>(&self, r: DataRef<T>) -> T::Out<'_> {
        T::read(&self.fields[self.typed_index(r)].value)
    }

    /// Writes a field through a typed reference of the class's declaration (component outputs);
    /// readers linked to it see the change.
    pub fn put<T: DataType>(&mut self, r: DataRef<T>, v: T::In) {
        let i = self.typed_index(r);
        let group = group_size(&self.fields[i].decl.kind, self.arity());
        self.replace(i, T::write(v, group));
    }

    /// Whether the component has the field (for references of shared groups, which every class
    /// of a family may or may not include).
    pub fn has<T: DataType>(&self, r: DataRef<T>) -> bool {
        self.index_of(r.name).is_some_and(|i| T::accepts(&self.fields[i].decl.kind))
    }

    /// Whether the scene gave a value (or a link) for the field.
    pub fn is_given<T: DataType>(&self, r: DataRef<T>) -> bool {
        self.field(r.name).is_some_and(|f| f.is_set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{decl, decl_alias, DataDecl, TemplateArity};

    static TABLE: &[DataDecl] = &[
        decl("stiffness", DataKind::Real, "10", ""),
        decl_alias("indices", &["points"], DataKind::Indices, "0 2", ""),
        decl("method", DataKind::Options(&["small", "large"]), "large", ""),
        decl("center", DataKind::Fixed(3), "1 2 3", ""),
        decl("springs", DataKind::RealTuples(5), "", ""),
    ];

    const STIFFNESS: DataRef<Real> = DataRef::declared("stiffness");
    const POINTS: DataRef<Indices> = DataRef::declared("points");
    const METHOD: DataRef<Text> = DataRef::declared("method");
    const CENTER: DataRef<Vec3> = DataRef::declared("center");
    const SPRINGS: DataRef<Reals> = DataRef::declared("springs");

    #[test]
    fn references_read_and_write_typed_values() {
        let mut d = DataSet::from_decls(&[TABLE], TemplateArity::SCALAR);
        assert_eq!(d.get(STIFFNESS), 10.0);
        assert_eq!(d.get(POINTS), &[0, 2]);
        assert_eq!(d.get(METHOD), "large");
        assert_eq!(d.get(CENTER), [1.0, 2.0, 3.0]);
        let v0 = d.field("stiffness").unwrap().version;
        d.put(STIFFNESS, 3.5);
        assert_eq!(d.get(STIFFNESS), 3.5);
        assert_eq!(d.field("stiffness").unwrap().version, v0 + 1);
        // Writing the same value again is not a change.
        d.put(STIFFNESS, 3.5);
        assert_eq!(d.field("stiffness").unwrap().version, v0 + 1);
        // Lists take the grouping of their kind.
        d.put(SPRINGS, vec![0.0, 1.0, 10.0, 0.5, 1.0]);
        assert_eq!(d.field("springs").unwrap().value, Value::Reals { arity: 5, v: vec![0.0, 1.0, 10.0, 0.5, 1.0] });
    }

    #[test]
    fn writes_by_name_are_checked() {
        let mut d = DataSet::from_decls(&[TABLE], TemplateArity::SCALAR);
        let e = d.write_value("stifness", Value::Real(1.0)).unwrap_err();
        assert!(matches!(e, crate::data::DataError::Unknown { .. }), "{e}");
        assert_eq!(e.to_string(), "no Data 'stifness'");
        let e = d.write_value("stiffness", Value::Str("soft".into())).unwrap_err();
        assert_eq!(e.to_string(), "Data 'stiffness' is a real, not a string");
        assert!(d.write_value("method", Value::Str("huge".into())).is_err());
        assert!(d.write_value("springs", Value::Reals { arity: 1, v: vec![1.0, 2.0] }).is_err(), "not a whole number of springs");
        assert_eq!(d.get(STIFFNESS), 10.0, "refused writes change nothing");
        d.write_value("stiffness", Value::Int(4)).unwrap();
        assert_eq!(d.get(STIFFNESS), 4.0);
        d.write_value("points", Value::Indices { arity: 1, v: vec![5] }).unwrap();
        assert_eq!(d.get(POINTS), &[5]);
        assert!(d.write_text("stiffness", "abc").is_err());
        assert!(d.write_text("center", "1 2").unwrap().is_some(), "a partial vector reads with a warning");
    }

    #[test]
    #[should_panic(expected = "declared as a real but used as a index list")]
    fn a_reference_of_the_wrong_type_is_a_bug() {
        let d = DataSet::from_decls(&[TABLE], TemplateArity::SCALAR);
        let _ = d.get(DataRef::<Indices>::declared("stiffness"));
    }
}
