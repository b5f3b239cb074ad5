//! Links libcranecl.so with `-Bsymbolic-functions`: calls between our own exported
//! functions bind inside the library, never to the ICD loader's same-named symbols.

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-Bsymbolic-functions");
}
